/// The SDK's `EmpaticaDeviceDelegate`: told of each value as it is decoded,
/// synchronously, on the `E4DeviceManager`'s actor, before the value goes to
/// the manager's streams. Give one to `E4DeviceManager.setDelegate(_:)`.
///
/// The streams suit code that awaits; a delegate suits code that only
/// records (a callback per value costs no task switch). Every method does
/// nothing unless implemented.
public protocol E4DeviceDelegate: AnyObject, Sendable {
  /// `didUpdateDeviceStatus:forDevice:`
  func didUpdate(status: E4DeviceStatus, device: E4DeviceManager)
  /// `didReceiveBVP:withTimestamp:fromDevice:`: blood volume pulse, 64 Hz.
  func didReceiveBVP(_ sample: E4Sample, device: E4DeviceManager)
  /// `didReceiveGSR:withTimestamp:fromDevice:`: skin conductance in µS, 4 Hz.
  func didReceiveGSR(_ sample: E4Sample, device: E4DeviceManager)
  /// `didReceiveTemperature:withTimestamp:fromDevice:`: skin temperature in °C, 4 Hz.
  func didReceiveTemperature(_ sample: E4Sample, device: E4DeviceManager)
  /// `didReceiveAccelerationX:y:z:withTimestamp:fromDevice:`: 1/64 g per axis, 32 Hz.
  func didReceiveAcceleration(_ sample: E4Acceleration, device: E4DeviceManager)
  /// `didReceiveIBI:withTimestamp:fromDevice:`: an interbeat interval in seconds, stamped at the beat.
  func didReceiveIBI(_ sample: E4Sample, device: E4DeviceManager)
  /// `didReceiveBatteryLevel:withTimestamp:fromDevice:`: 0…1.
  func didReceiveBatteryLevel(_ sample: E4Sample, device: E4DeviceManager)
  /// `didReceiveTagAtTimestamp:fromDevice:`: a button press.
  func didReceiveTag(_ tag: E4Tag, device: E4DeviceManager)
}

extension E4DeviceDelegate {
  public func didUpdate(status: E4DeviceStatus, device: E4DeviceManager) {}
  public func didReceiveBVP(_ sample: E4Sample, device: E4DeviceManager) {}
  public func didReceiveGSR(_ sample: E4Sample, device: E4DeviceManager) {}
  public func didReceiveTemperature(_ sample: E4Sample, device: E4DeviceManager) {}
  public func didReceiveAcceleration(_ sample: E4Acceleration, device: E4DeviceManager) {}
  public func didReceiveIBI(_ sample: E4Sample, device: E4DeviceManager) {}
  public func didReceiveBatteryLevel(_ sample: E4Sample, device: E4DeviceManager) {}
  public func didReceiveTag(_ tag: E4Tag, device: E4DeviceManager) {}
}
