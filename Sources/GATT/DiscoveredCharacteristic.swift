/// A characteristic found by service discovery.
public struct DiscoveredCharacteristic: Hashable, Sendable {
  /// Its address, for `read`, `write` and `notifications(of:)`.
  public var address: CharacteristicAddress
  /// Its properties.
  public var properties: CharacteristicProperties
  /// The UUIDs of its descriptors, the CCCD (`2902`) included when it notifies or indicates.
  public var descriptors: [BluetoothUUID]

  public init(
    address: CharacteristicAddress, properties: CharacteristicProperties,
    descriptors: [BluetoothUUID]
  ) {
    self.address = address
    self.properties = properties
    self.descriptors = descriptors
  }

  /// The characteristic's UUID.
  public var uuid: BluetoothUUID { address.characteristic }
}
