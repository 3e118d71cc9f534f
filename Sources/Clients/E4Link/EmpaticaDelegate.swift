/// The SDK's `EmpaticaDelegate`: told of the BLE status and, once after each
/// scan, of the wristbands found. Give one to
/// `EmpaticaAPI.discoverDevices(with:)`.
///
/// Called on the `EmpaticaAPI` actor, synchronously. Every method does
/// nothing unless implemented.
public protocol EmpaticaDelegate: AnyObject, Sendable {
  /// `didUpdateBLEStatus:`: the BLE manager's status changed.
  func didUpdate(_ status: BLEStatus)
  /// `didDiscoverDevices:`: the scan ended; these are the wristbands it
  /// found, in the order found (empty when none).
  func didDiscoverDevices(_ devices: [EmpaticaDeviceManager])
}

extension EmpaticaDelegate {
  public func didUpdate(_ status: BLEStatus) {}
  public func didDiscoverDevices(_ devices: [EmpaticaDeviceManager]) {}
}
