/// The SDK's `EmpaticaDeviceDelegate`: told of each value as it is decoded,
/// and of every status change, synchronously, on the `E4DeviceManager`'s
/// actor, before the value goes to the manager's streams. Give one to
/// `E4DeviceManager.connect(with:)`.
///
/// Values are `Float` and accelerations `Int8` (C `char`), as the SDK
/// declares them; the streams carry the same values as `Double`. Timestamps
/// are the device's, in seconds since 1 January 1970 (GMT). Every method does
/// nothing unless implemented.
public protocol EmpaticaDeviceDelegate: AnyObject, Sendable {
  /// `didUpdateDeviceStatus:forDevice:`: the manager's `status` changed.
  func didUpdate(_ status: DeviceStatus, forDevice device: EmpaticaDeviceManager)
  /// `didReceiveTagAtTimestamp:fromDevice:`: the button was pressed.
  func didReceiveTag(atTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager)
  /// `didReceiveIBI:withTimestamp:fromDevice:`: an interbeat interval in seconds, stamped at the beat.
  func didReceiveIBI(_ ibi: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager)
  /// `didReceiveGSR:withTimestamp:fromDevice:`: skin conductance in µS, 4 Hz.
  func didReceiveGSR(_ gsr: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager)
  /// `didReceiveBVP:withTimestamp:fromDevice:`: blood volume pulse, 64 Hz.
  func didReceiveBVP(_ bvp: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager)
  /// `didReceiveTemperature:withTimestamp:fromDevice:`: skin temperature in °C, 4 Hz.
  func didReceiveTemperature(
    _ temp: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager)
  /// `didReceiveAccelerationX:y:z:withTimestamp:fromDevice:`: 1/64 g per axis, 32 Hz.
  func didReceiveAccelerationX(
    _ x: Int8, y: Int8, z: Int8, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager)
  /// `didReceiveBatteryLevel:withTimestamp:fromDevice:`: the manager's
  /// `batteryLevel` (0…1) changed.
  func didReceiveBatteryLevel(
    _ level: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager)
}

extension EmpaticaDeviceDelegate {
  public func didUpdate(_ status: DeviceStatus, forDevice device: EmpaticaDeviceManager) {}
  public func didReceiveTag(atTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager) {}
  public func didReceiveIBI(_ ibi: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager) {}
  public func didReceiveGSR(_ gsr: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager) {}
  public func didReceiveBVP(_ bvp: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager) {}
  public func didReceiveTemperature(
    _ temp: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager
  ) {}
  public func didReceiveAccelerationX(
    _ x: Int8, y: Int8, z: Int8, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager
  ) {}
  public func didReceiveBatteryLevel(
    _ level: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager
  ) {}
}
