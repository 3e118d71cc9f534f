/// Bytes written as hex: `0a1b2c`, `0a 1b 2c` or `0a:1b:2c`.
public enum HexBytes {
  /// The bytes `text` spells, or `nil` when it is not whole bytes of hex
  /// (an empty text is no bytes).
  public static func parse(_ text: String) -> [UInt8]? { parse(text.utf8) }

  /// The bytes UTF-8 `digits` spell, as `parse(_:)` with text.
  public static func parse(_ digits: some Collection<UInt8>) -> [UInt8]? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var high: UInt8?
    for character in digits {
      if character == UInt8(ascii: " ") || character == UInt8(ascii: ":") || character == UInt8(ascii: "-") {
        guard high == nil else { return nil }
        continue
      }
      let nibble: UInt8
      switch character {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
      default: return nil
      }
      if let first = high {
        bytes.append(first << 4 | nibble)
        high = nil
      } else {
        high = nibble
      }
    }
    return high == nil ? bytes : nil
  }

  /// `bytes` as lowercase hex without separators.
  public static func format(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}
