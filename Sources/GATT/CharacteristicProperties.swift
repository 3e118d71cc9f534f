/// The properties of a GATT characteristic: the bits of its declaration
/// (Core Specification Vol 3 Part G 3.3.1.1), with their BlueZ flag names.
public struct CharacteristicProperties: OptionSet, Hashable, Sendable, Codable {
  public let rawValue: UInt8

  public init(rawValue: UInt8) {
    self.rawValue = rawValue
  }

  /// The value may be broadcast in advertising data.
  public static let broadcast = CharacteristicProperties(rawValue: 0x01)
  /// The value may be read.
  public static let read = CharacteristicProperties(rawValue: 0x02)
  /// The value may be written without a response (ATT Write Command).
  public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
  /// The value may be written with a response (ATT Write Request).
  public static let write = CharacteristicProperties(rawValue: 0x08)
  /// The value may be notified (unacknowledged).
  public static let notify = CharacteristicProperties(rawValue: 0x10)
  /// The value may be indicated (acknowledged by the central).
  public static let indicate = CharacteristicProperties(rawValue: 0x20)
  /// The value may be written with an authentication signature.
  public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 0x40)
  /// There is a Characteristic Extended Properties descriptor.
  public static let extendedProperties = CharacteristicProperties(rawValue: 0x80)

  /// Each property bit with its BlueZ `GattCharacteristic1.Flags` name, in bit order.
  public static let bluezFlagNames: [(property: CharacteristicProperties, flag: String)] = [
    (.broadcast, "broadcast"),
    (.read, "read"),
    (.writeWithoutResponse, "write-without-response"),
    (.write, "write"),
    (.notify, "notify"),
    (.indicate, "indicate"),
    (.authenticatedSignedWrites, "authenticated-signed-writes"),
    (.extendedProperties, "extended-properties"),
  ]

  /// The BlueZ `Flags` strings for these properties, in bit order,
  /// e.g. `["read", "notify"]`.
  public var bluezFlags: [String] {
    Self.bluezFlagNames.filter { contains($0.property) }.map(\.flag)
  }

  /// Properties from BlueZ `Flags`. Flags that are not property bits
  /// (`"reliable-write"`, `"encrypt-read"`, `"authorize"`, …) are ignored,
  /// so a central can read whatever a newer BlueZ reports.
  public init(bluezFlags: some Sequence<String>) {
    var properties: CharacteristicProperties = []
    for flag in bluezFlags {
      if let match = Self.bluezFlagNames.first(where: { $0.flag == flag }) {
        properties.insert(match.property)
      }
    }
    self = properties
  }
}

extension CharacteristicProperties: CustomStringConvertible {
  /// The BlueZ flags joined, e.g. `read|notify`, or `none`.
  public var description: String {
    let flags = bluezFlags
    return flags.isEmpty ? "none" : flags.joined(separator: "|")
  }
}
