/// A service a device model declares.
public struct ServiceDefinition: Hashable, Sendable, Codable {
  /// The service's UUID.
  public var uuid: BluetoothUUID
  /// A human name for logs and errors, e.g. `Device Information`.
  public var name: String?
  /// Whether it is a primary service (secondary services are only included by others).
  public var isPrimary: Bool
  /// Its characteristics, in declaration order.
  public var characteristics: [CharacteristicDefinition]
  /// The ATT handle of its declaration on the real device, for centrals that
  /// address the device by handle; `nil` lets the host choose. A host that
  /// can place it there does (BlueZ's `Handle` property).
  public var handle: UInt16?

  public init(
    _ uuid: BluetoothUUID,
    name: String? = nil,
    isPrimary: Bool = true,
    handle: UInt16? = nil,
    characteristics: [CharacteristicDefinition]
  ) {
    self.uuid = uuid
    self.name = name
    self.isPrimary = isPrimary
    self.handle = handle
    self.characteristics = characteristics
  }

  /// The address of one of this service's characteristics.
  public func address(of characteristic: BluetoothUUID) -> CharacteristicAddress {
    CharacteristicAddress(service: uuid, characteristic: characteristic)
  }
}
