/// A characteristic a device model declares.
public struct CharacteristicDefinition: Hashable, Sendable, Codable {
  /// The characteristic's UUID.
  public var uuid: BluetoothUUID
  /// A human name for logs and errors, e.g. `UART TX`.
  public var name: String
  /// What a central may do with it.
  public var properties: CharacteristicProperties
  /// Declared descriptors (never the CCCD, which the host manages).
  public var descriptors: [DescriptorDefinition]
  /// The value served by the default `PeripheralModel.read`, if any.
  public var initialValue: [UInt8]?
  /// The longest value a central may write; longer writes are refused by the
  /// host with `ATTError.invalidAttributeValueLength` before the model sees them.
  public var maximumLength: Int?
  /// The ATT handle of its value on the real device (its declaration is the
  /// handle before), for centrals that address the device by handle; `nil`
  /// lets the host choose. Needs a handle on the service too.
  public var handle: UInt16?

  public init(
    _ uuid: BluetoothUUID,
    name: String,
    properties: CharacteristicProperties,
    initialValue: [UInt8]? = nil,
    maximumLength: Int? = nil,
    handle: UInt16? = nil,
    descriptors: [DescriptorDefinition] = []
  ) {
    self.uuid = uuid
    self.name = name
    self.properties = properties
    self.initialValue = initialValue
    self.maximumLength = maximumLength
    self.handle = handle
    self.descriptors = descriptors
  }
}
