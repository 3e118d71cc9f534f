/// A service found by service discovery.
public struct DiscoveredService: Hashable, Sendable {
  /// The service's UUID.
  public var uuid: BluetoothUUID
  /// Whether it is a primary service.
  public var isPrimary: Bool
  /// Its characteristics, in the peripheral's order.
  public var characteristics: [DiscoveredCharacteristic]

  public init(uuid: BluetoothUUID, isPrimary: Bool, characteristics: [DiscoveredCharacteristic]) {
    self.uuid = uuid
    self.isPrimary = isPrimary
    self.characteristics = characteristics
  }

  /// The characteristic with this UUID.
  public func characteristic(_ uuid: BluetoothUUID) -> DiscoveredCharacteristic? {
    characteristics.first { $0.uuid == uuid }
  }
}
