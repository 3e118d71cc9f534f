/// What discovery reports: the `EmpaticaDelegate` callbacks as values.
public enum E4DiscoveryEvent: Sendable {
  /// `didUpdateBLEStatus:`.
  case bleStatus(BLEStatus)
  /// `didDiscoverDevices:`: every wristband found so far in this scan.
  case devices([E4DeviceManager])
}
