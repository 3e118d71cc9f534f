import GATT

/// How the device answers a write: when a central writes a value that
/// matches, it answers with notifications or refuses with an ATT error.
public struct WriteRule: Sendable {
  /// What a written value must be to match.
  public enum Match: Sendable {
    /// Exactly these bytes.
    case bytes([UInt8])
    /// A regular expression matching the whole value as lowercase hex without spaces (`^01..ff$`).
    case pattern(String)
    /// Any value.
    case any
  }

  /// A notification (or indication, when the characteristic only indicates) sent in answer.
  public struct Reply: Sendable, Hashable {
    public var characteristic: CharacteristicAddress
    public var value: [UInt8]
    /// How long after the write it is sent.
    public var delay: Duration

    public init(characteristic: CharacteristicAddress, value: [UInt8], delay: Duration = .zero) {
      self.characteristic = characteristic
      self.value = value
      self.delay = delay
    }
  }

  /// What the device does when a write matches.
  public enum Answer: Sendable {
    case replies([Reply])
    case error(ATTError)
  }

  public var characteristic: CharacteristicAddress
  public var match: Match
  public var answer: Answer

  /// A rule; a `pattern` that is not a regular expression matches nothing
  /// (scenario validation refuses one before it gets here).
  public init(characteristic: CharacteristicAddress, match: Match, answer: Answer) {
    self.characteristic = characteristic
    self.match = match
    self.answer = answer
  }

  /// Whether a write of `value` to `address` matches this rule.
  public func matches(_ value: [UInt8], on address: CharacteristicAddress) -> Bool {
    guard address == characteristic else { return false }
    switch match {
    case .any: return true
    case .bytes(let bytes): return bytes == value
    case .pattern(let text):
      // Compiled per write (a Regex is not Sendable); writes are few.
      guard let regex = try? Regex(text) else { return false }
      return (try? regex.wholeMatch(in: Self.hex(value))) != nil
    }
  }

  /// `value` as lowercase hex without separators.
  public static func hex(_ value: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    text.reserveCapacity(value.count * 2)
    for byte in value {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return text
  }
}
