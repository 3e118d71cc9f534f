/// The SDK's `DeviceStatus`: the connection state of one wristband, as
/// `E4DeviceManager` reports it.
public enum E4DeviceStatus: Hashable, Sendable {
  case disconnected
  case connecting
  case connected
  case disconnecting
}

/// The SDK's name for `E4DeviceStatus`.
public typealias DeviceStatus = E4DeviceStatus

/// `kDeviceStatusDisconnected`: the wristband is not connected.
public let kDeviceStatusDisconnected = E4DeviceStatus.disconnected
/// `kDeviceStatusConnecting`: a connection is in progress.
public let kDeviceStatusConnecting = E4DeviceStatus.connecting
/// `kDeviceStatusConnected`: the wristband is connected.
public let kDeviceStatusConnected = E4DeviceStatus.connected
/// `kDeviceStatusDisconnecting`: a disconnection is in progress.
public let kDeviceStatusDisconnecting = E4DeviceStatus.disconnecting
