/// A Bluetooth UUID: a 16-bit or 32-bit SIG-assigned alias, or a full 128-bit UUID.
///
/// Every value is stored as its 128-bit form, so `"180A"` and
/// `"0000180a-0000-1000-8000-00805f9b34fb"` are equal and hash alike.
/// `description` prints the short form when the UUID is on the Bluetooth base
/// UUID (`180A`, `0001FFFF`), the full lowercase form otherwise;
/// `uuidString` is always the full lowercase 128-bit form (what BlueZ uses).
public struct BluetoothUUID: Hashable, Comparable, Sendable {
  /// The most significant 64 bits (the first 16 hex digits).
  public let high: UInt64
  /// The least significant 64 bits (the last 16 hex digits).
  public let low: UInt64

  /// The Bluetooth base UUID `00000000-0000-1000-8000-00805f9b34fb`.
  public static let base = BluetoothUUID(high: 0x0000_0000_0000_1000, low: 0x8000_0080_5F9B_34FB)

  /// A UUID from its 128 bits, most significant half first.
  public init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }

  /// A 16-bit SIG alias, e.g. `0x180A` (Device Information).
  public init(_ alias: UInt16) {
    self.init(alias32: UInt32(alias))
  }

  /// A 32-bit SIG alias.
  public init(alias32: UInt32) {
    self.init(high: UInt64(alias32) << 32 | Self.base.high, low: Self.base.low)
  }

  /// A UUID from its 16 bytes in the order they are written (big-endian).
  public init?(bytes: some Collection<UInt8>) {
    guard bytes.count == 16 else { return nil }
    var high: UInt64 = 0
    var low: UInt64 = 0
    for (index, byte) in bytes.enumerated() {
      if index < 8 {
        high = high << 8 | UInt64(byte)
      } else {
        low = low << 8 | UInt64(byte)
      }
    }
    self.init(high: high, low: low)
  }

  /// Parses `"180A"`, `"0x180A"`, a 32-bit alias such as `"0001FFFF"`, or a
  /// 128-bit UUID with or without hyphens (`"0000180a-0000-1000-8000-00805f9b34fb"`),
  /// in any case. (Labelled, because Swift reads `BluetoothUUID("180A")` as
  /// the string literal initializer, which traps on invalid input.)
  public init(string: String) throws(ParseError) {
    let characters = Array(string)
    guard !characters.isEmpty else { throw ParseError(input: string, reason: .empty) }
    var digits = characters[...]
    var prefixLength = 0
    if digits.count > 2, digits.first == "0",
      digits.dropFirst().first == "x" || digits.dropFirst().first == "X"
    {
      digits = digits.dropFirst(2)
      prefixLength = 2
    }
    var hex: [UInt8] = []
    hex.reserveCapacity(32)
    let hyphenated = prefixLength == 0 && characters.count == 36
    for (offset, character) in zip(prefixLength..., digits) {
      if character == "-" {
        if hyphenated && [8, 13, 18, 23].contains(offset) { continue }
        throw ParseError(input: string, reason: .misplacedHyphen(offset: offset))
      }
      guard character.isASCII, let value = character.hexDigitValue else {
        throw ParseError(input: string, reason: .invalidCharacter(character, offset: offset))
      }
      hex.append(UInt8(value))
    }
    if hyphenated && hex.count != 32 {
      throw ParseError(input: string, reason: .misplacedHyphen(offset: nil))
    }
    switch hex.count {
    case 4, 8:
      let alias = hex.reduce(UInt32(0)) { $0 << 4 | UInt32($1) }
      self.init(alias32: alias)
    case 32:
      let high = hex[0..<16].reduce(UInt64(0)) { $0 << 4 | UInt64($1) }
      let low = hex[16..<32].reduce(UInt64(0)) { $0 << 4 | UInt64($1) }
      self.init(high: high, low: low)
    default:
      throw ParseError(input: string, reason: .invalidLength(hexDigits: hex.count))
    }
  }

  /// Whether the UUID is on the Bluetooth base UUID, i.e. has a 16- or 32-bit alias.
  public var isSIGBased: Bool {
    low == Self.base.low && high & 0xFFFF_FFFF == Self.base.high
  }

  /// The 16-bit alias, when the UUID has one.
  public var alias16: UInt16? {
    guard isSIGBased, high >> 48 == 0 else { return nil }
    return UInt16(truncatingIfNeeded: high >> 32)
  }

  /// The 32-bit alias, when the UUID is on the Bluetooth base UUID.
  public var alias32: UInt32? {
    isSIGBased ? UInt32(truncatingIfNeeded: high >> 32) : nil
  }

  /// The 16 bytes in the order they are written (big-endian).
  public var bytes: [UInt8] {
    (0..<8).reversed().map { UInt8(truncatingIfNeeded: high >> ($0 * 8)) }
      + (0..<8).reversed().map { UInt8(truncatingIfNeeded: low >> ($0 * 8)) }
  }

  /// The shortest over-the-air form (2, 4 or 16 bytes), little-endian, as in
  /// advertising data and ATT PDUs.
  public var shortestLittleEndianBytes: [UInt8] {
    if let alias16 {
      return [UInt8(truncatingIfNeeded: alias16), UInt8(truncatingIfNeeded: alias16 >> 8)]
    }
    if let alias32 {
      return (0..<4).map { UInt8(truncatingIfNeeded: alias32 >> ($0 * 8)) }
    }
    return bytes.reversed()
  }

  /// The full 128-bit form in lowercase, e.g. `0000180a-0000-1000-8000-00805f9b34fb`.
  public var uuidString: String {
    let digits = Self.hex(high, width: 16) + Self.hex(low, width: 16)
    var result = ""
    result.reserveCapacity(36)
    for (index, digit) in digits.enumerated() {
      if [8, 12, 16, 20].contains(index) { result.append("-") }
      result.append(digit)
    }
    return result
  }

  public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
    (lhs.high, lhs.low) < (rhs.high, rhs.low)
  }

  private static func hex(_ value: UInt64, width: Int) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }
}

extension BluetoothUUID: CustomStringConvertible {
  /// `180A` for a 16-bit alias, `0001FFFF` for a 32-bit alias, else the full lowercase form.
  public var description: String {
    if let alias16 {
      return Self.hex(UInt64(alias16), width: 4).uppercased()
    }
    if let alias32 {
      return Self.hex(UInt64(alias32), width: 8).uppercased()
    }
    return uuidString
  }
}

extension BluetoothUUID: ExpressibleByStringLiteral {
  /// A UUID from a literal; an invalid literal is a programming error and traps.
  public init(stringLiteral value: String) {
    do {
      try self.init(string: value)
    } catch {
      preconditionFailure(error.description)
    }
  }
}

extension BluetoothUUID: Codable {
  /// Decodes any form `init(string:)` accepts.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let string = try container.decode(String.self)
    do {
      try self.init(string: string)
    } catch {
      throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
    }
  }

  /// Encodes `description` (the short form where there is one).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}

extension BluetoothUUID {
  /// Why a string is not a Bluetooth UUID.
  public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Hashable, Sendable {
      /// The string is empty.
      case empty
      /// A character that is not a hexadecimal digit, at a character offset.
      case invalidCharacter(Character, offset: Int)
      /// A hyphen where a 128-bit UUID has none (offset `nil`: hyphens missing).
      case misplacedHyphen(offset: Int?)
      /// A number of hex digits other than 4, 8 or 32.
      case invalidLength(hexDigits: Int)
    }

    /// The string that failed to parse.
    public var input: String
    /// What was wrong with it.
    public var reason: Reason

    public var description: String {
      let what: String
      switch reason {
      case .empty:
        what = "the string is empty"
      case .invalidCharacter(let character, let offset):
        what = "\"\(character)\" at offset \(offset) is not a hexadecimal digit"
      case .misplacedHyphen(let offset?):
        what = "unexpected \"-\" at offset \(offset); a 128-bit UUID is written 8-4-4-4-12"
      case .misplacedHyphen(nil):
        what = "a 128-bit UUID is written 8-4-4-4-12 hex digits"
      case .invalidLength(let count):
        what =
          "\(count) hex digits; expected 4 (16-bit), 8 (32-bit) or 32 (128-bit, optionally 8-4-4-4-12)"
      }
      return "invalid Bluetooth UUID \"\(input)\": \(what)"
    }
  }
}

extension BluetoothUUID {
  /// Characteristic User Description descriptor (`2901`).
  public static let characteristicUserDescription = BluetoothUUID(0x2901)
  /// Client Characteristic Configuration descriptor (`2902`), managed by the host.
  public static let clientCharacteristicConfiguration = BluetoothUUID(0x2902)
}
