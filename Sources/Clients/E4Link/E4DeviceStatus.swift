/// The connection state of one wristband, as `E4DeviceManager` reports it.
public enum E4DeviceStatus: Hashable, Sendable {
  case disconnected
  case connecting
  case connected
  case disconnecting
}
