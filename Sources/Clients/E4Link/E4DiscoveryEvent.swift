/// What discovery reports as a stream: the `EmpaticaDelegate` callbacks as
/// values, and each wristband as the scan sees it.
public enum E4DiscoveryEvent: Sendable {
  /// `didUpdateBLEStatus:`.
  case bleStatus(BLEStatus)
  /// A wristband seen by the scan in progress (not in the SDK: lets a
  /// caller stop the scan at the first match).
  case found(E4DeviceManager)
  /// `didDiscoverDevices:`: once, after the scan, every wristband it found
  /// (possibly none).
  case devices([E4DeviceManager])
}
