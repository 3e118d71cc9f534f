/// The GATT database of a device model: its services, validated on creation.
///
/// A characteristic is addressed by its service UUID and its own UUID, so a
/// profile rejects anything that would make an address ambiguous.
public struct GATTProfile: Hashable, Sendable {
  /// The services, in declaration order.
  public let services: [ServiceDefinition]

  /// The longest attribute value ATT allows.
  public static let maximumAttributeLength = 512

  /// A validated profile. Rejects duplicate service UUIDs, duplicate
  /// characteristic UUIDs within a service, duplicate descriptor UUIDs within a
  /// characteristic, a declared CCCD (`2902`), characteristics without
  /// properties, maximum lengths outside 0…512, initial values longer than
  /// their maximum length, and fixed handles that are 0, not in declaration
  /// order, or on a characteristic of a service without one.
  public init(_ services: [ServiceDefinition]) throws(ValidationError) {
    var serviceUUIDs: Set<BluetoothUUID> = []
    for service in services {
      guard serviceUUIDs.insert(service.uuid).inserted else {
        throw ValidationError("service \(service.uuid) is declared more than once")
      }
      guard service.handle != 0 else { throw ValidationError("service \(service.uuid) has handle 0x0000") }
      // A characteristic's value follows its declaration, so its handle is at least the service's + 2.
      var lowest = service.handle.map { Int($0) + 2 }
      var characteristicUUIDs: Set<BluetoothUUID> = []
      for characteristic in service.characteristics {
        let label =
          "characteristic \(characteristic.uuid) (\(characteristic.name)) in service \(service.uuid)"
        guard characteristicUUIDs.insert(characteristic.uuid).inserted else {
          throw ValidationError("\(label) is declared more than once")
        }
        if let handle = characteristic.handle {
          guard let least = lowest else {
            throw ValidationError("\(label) has a handle, and its service has none")
          }
          guard Int(handle) >= least else {
            throw ValidationError(
              "\(label) has handle \(Self.hex(handle)); the handles so far leave \(Self.hex(least)) as the first it may have"
            )
          }
          // Its value, then a handle for each descriptor (the CCCD's included) before the next declaration.
          let descriptors =
            characteristic.descriptors.count
            + (characteristic.properties.contains(.notify) || characteristic.properties.contains(.indicate) ? 1 : 0)
          lowest = Int(handle) + descriptors + 2
        }
        guard !characteristic.properties.isEmpty else {
          throw ValidationError("\(label) has no properties")
        }
        if let maximumLength = characteristic.maximumLength,
          !(0...Self.maximumAttributeLength).contains(maximumLength)
        {
          throw ValidationError(
            "\(label) has maximum length \(maximumLength); ATT allows 0...\(Self.maximumAttributeLength)"
          )
        }
        if let value = characteristic.initialValue {
          let limit = characteristic.maximumLength ?? Self.maximumAttributeLength
          guard value.count <= limit else {
            throw ValidationError(
              "\(label) has an initial value of \(value.count) bytes, longer than \(limit)")
          }
        }
        var descriptorUUIDs: Set<BluetoothUUID> = []
        for descriptor in characteristic.descriptors {
          guard descriptor.uuid != .clientCharacteristicConfiguration else {
            throw ValidationError(
              "\(label) declares a CCCD (2902); the host adds it for notify and indicate")
          }
          guard descriptorUUIDs.insert(descriptor.uuid).inserted else {
            throw ValidationError("\(label) declares descriptor \(descriptor.uuid) more than once")
          }
        }
      }
    }
    self.services = services
  }

  private static func hex(_ handle: some BinaryInteger) -> String {
    let digits = String(handle, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }

  /// The service with this UUID.
  public func service(_ uuid: BluetoothUUID) -> ServiceDefinition? {
    services.first { $0.uuid == uuid }
  }

  /// The characteristic at an address.
  public func characteristic(at address: CharacteristicAddress) -> CharacteristicDefinition? {
    service(address.service)?.characteristics.first { $0.uuid == address.characteristic }
  }

  /// The characteristic with this UUID, when exactly one service holds one;
  /// `nil` when none or several do (then use `characteristic(at:)`).
  public func characteristic(_ uuid: BluetoothUUID) -> CharacteristicDefinition? {
    guard let address = address(of: uuid) else { return nil }
    return characteristic(at: address)
  }

  /// The address of the characteristic with this UUID, when exactly one service holds one.
  public func address(of characteristic: BluetoothUUID) -> CharacteristicAddress? {
    let matches = services.filter { service in
      service.characteristics.contains { $0.uuid == characteristic }
    }
    guard matches.count == 1 else { return nil }
    return matches[0].address(of: characteristic)
  }

  /// Every characteristic address, in declaration order.
  public var characteristicAddresses: [CharacteristicAddress] {
    services.flatMap { service in service.characteristics.map { service.address(of: $0.uuid) } }
  }

  /// Why a profile is invalid.
  public struct ValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the service and characteristic.
    public var message: String

    public init(_ message: String) {
      self.message = message
    }

    public var description: String { "invalid GATT profile: \(message)" }
  }
}
