/// The SDK's `BLEStatus`: the state of the central's Bluetooth LE manager,
/// as `EmpaticaAPI` reports it to its `EmpaticaDelegate`.
public enum BLEStatus: Hashable, Sendable {
  /// Bluetooth LE is not supported or not switched on.
  case notAvailable
  /// Ready to scan for wristbands.
  case ready
  /// Scanning for wristbands.
  case scanning
}

/// `kBLEStatusNotAvailable`: Bluetooth LE is not supported or not active.
public let kBLEStatusNotAvailable = BLEStatus.notAvailable
/// `kBLEStatusReady`: the central is ready to scan.
public let kBLEStatusReady = BLEStatus.ready
/// `kBLEStatusScanning`: the central is scanning for wristbands.
public let kBLEStatusScanning = BLEStatus.scanning
