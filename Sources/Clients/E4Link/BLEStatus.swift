/// The state of the central's Bluetooth LE manager, as `EmpaticaAPI` reports it.
public enum BLEStatus: Hashable, Sendable {
  /// Bluetooth LE is not supported or not switched on.
  case notAvailable
  /// Ready to scan for wristbands.
  case ready
  /// Scanning for wristbands.
  case scanning
}
