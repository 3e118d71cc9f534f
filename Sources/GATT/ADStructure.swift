/// One AD structure of advertising or scan response data: length, AD type, data
/// (Core Specification Vol 3 Part C 11; Supplement to the Core Specification Part A).
public struct ADStructure: Hashable, Sendable {
  /// An AD type byte.
  public struct DataType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
      self.rawValue = rawValue
    }

    public static let flags = DataType(rawValue: 0x01)
    public static let incompleteServiceUUIDs16 = DataType(rawValue: 0x02)
    public static let completeServiceUUIDs16 = DataType(rawValue: 0x03)
    public static let incompleteServiceUUIDs32 = DataType(rawValue: 0x04)
    public static let completeServiceUUIDs32 = DataType(rawValue: 0x05)
    public static let incompleteServiceUUIDs128 = DataType(rawValue: 0x06)
    public static let completeServiceUUIDs128 = DataType(rawValue: 0x07)
    public static let shortenedLocalName = DataType(rawValue: 0x08)
    public static let completeLocalName = DataType(rawValue: 0x09)
    public static let txPowerLevel = DataType(rawValue: 0x0A)
    public static let serviceData16 = DataType(rawValue: 0x16)
    public static let appearance = DataType(rawValue: 0x19)
    public static let serviceData32 = DataType(rawValue: 0x20)
    public static let serviceData128 = DataType(rawValue: 0x21)
    public static let manufacturerSpecificData = DataType(rawValue: 0xFF)

    public var description: String {
      switch self {
      case .flags: "flags"
      case .incompleteServiceUUIDs16, .completeServiceUUIDs16: "16-bit service UUIDs"
      case .incompleteServiceUUIDs32, .completeServiceUUIDs32: "32-bit service UUIDs"
      case .incompleteServiceUUIDs128, .completeServiceUUIDs128: "128-bit service UUIDs"
      case .shortenedLocalName: "shortened local name"
      case .completeLocalName: "local name"
      case .txPowerLevel: "TX power level"
      case .serviceData16, .serviceData32, .serviceData128: "service data"
      case .appearance: "appearance"
      case .manufacturerSpecificData: "manufacturer data"
      default: "AD type 0x\(String(rawValue, radix: 16))"
      }
    }
  }

  /// The AD type.
  public var type: DataType
  /// The data after the type byte.
  public var data: [UInt8]

  public init(_ type: DataType, _ data: [UInt8]) {
    self.type = type
    self.data = data
  }

  /// Bytes it takes on air: length byte + type byte + data.
  public var size: Int { 2 + data.count }

  /// The encoded structure: length (type + data), type, data.
  public var bytes: [UInt8] { [UInt8(truncatingIfNeeded: 1 + data.count), type.rawValue] + data }

  /// The flags structure of a connectable, general-discoverable LE-only peripheral
  /// (`0x06`: LE General Discoverable, BR/EDR Not Supported). BlueZ adds it itself.
  public static let discoverableFlags = ADStructure(.flags, [0x06])
}
