/// A descriptor a device model declares on a characteristic, with a fixed value.
///
/// The Client Characteristic Configuration descriptor (`2902`) is not declared:
/// the host adds and manages it for every characteristic that notifies or indicates.
public struct DescriptorDefinition: Hashable, Sendable, Codable {
  /// What a central may do with a descriptor.
  public struct Permissions: OptionSet, Hashable, Sendable, Codable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
      self.rawValue = rawValue
    }

    /// The central may read the value.
    public static let read = Permissions(rawValue: 0x01)
    /// The central may write the value.
    public static let write = Permissions(rawValue: 0x02)

    /// The BlueZ `GattDescriptor1.Flags` strings, e.g. `["read"]`.
    public var bluezFlags: [String] {
      (contains(.read) ? ["read"] : []) + (contains(.write) ? ["write"] : [])
    }
  }

  /// The descriptor's UUID.
  public var uuid: BluetoothUUID
  /// The value the host serves.
  public var value: [UInt8]
  /// Read and write permissions.
  public var permissions: Permissions

  public init(_ uuid: BluetoothUUID, value: [UInt8], permissions: Permissions = .read) {
    self.uuid = uuid
    self.value = value
    self.permissions = permissions
  }

  /// A read-only Characteristic User Description (`2901`) holding `text` in UTF-8.
  public static func userDescription(_ text: String) -> DescriptorDefinition {
    DescriptorDefinition(.characteristicUserDescription, value: Array(text.utf8))
  }
}
