/// One variable in a MethodSCRIPT data package: a type, a value, and optional
/// metadata, written `ba48D503Dp,10,288`.
///
/// The value is 7 hex digits holding the integer offset by 0x8000000
/// (so 0x8000000 is zero), then an SI prefix character; NaN is written as
/// `     nan` (five spaces). Metadata follow, each after a `,`: `1X` status
/// (hex bitmask), `2XX` current range (hex index), `4…` noise (hex).
public struct MethodScriptValue: Hashable, Sendable, CustomStringConvertible {
  /// What the value is.
  public var type: MethodScriptVariableType
  /// The integer as written, before the prefix's factor; `nil` for NaN.
  public var raw: Int?
  /// The SI prefix (`integer` for an integer value).
  public var prefix: SIPrefix
  /// The `1X` metadata, when present.
  public var status: MeasurementStatus?
  /// The `2XX` metadata as written, when present: an index into the
  /// instrument's current or potential ranges, by the type's `rangeKind`.
  public var rangeIndex: UInt8?
  /// The `4…` metadata (a noise figure, hex), when present.
  public var noise: Int?
  /// Metadata of kinds this decoder does not know, as written.
  public var otherMetadata: [String]

  /// The `2XX` metadata as a current range, for types whose range is a
  /// current range (currents, and `cc`); `nil` for others (`cd`'s is a
  /// potential range). Setting it writes the `2XX` metadata.
  public var currentRange: CurrentRange? {
    get { type.rangeKind == .current ? rangeIndex.map(CurrentRange.init(index:)) : nil }
    set { rangeIndex = newValue?.index }
  }

  /// The `2XX` metadata as a potential range index, for types whose range is
  /// a potential range (potentials, and `cd`, as PalmSens' decoders read it).
  /// PalmSens lists no potential ranges for the EmStat Pico.
  public var potentialRangeIndex: UInt8? { type.rangeKind == .potential ? rangeIndex : nil }

  /// The offset added to the integer before it is written in hex.
  public static let offset = 0x800_0000
  /// The largest magnitude 7 offset hex digits hold.
  public static let rawRange = -0x800_0000...0x7FF_FFFF

  public init(
    type: MethodScriptVariableType, raw: Int?, prefix: SIPrefix, status: MeasurementStatus? = nil,
    currentRange: CurrentRange? = nil, noise: Int? = nil, otherMetadata: [String] = []
  ) {
    self.type = type
    self.raw = raw.flatMap { Self.rawRange.contains($0) ? $0 : nil }
    self.prefix = raw == nil ? .none : prefix
    self.status = status
    self.rangeIndex = currentRange?.index
    self.noise = noise
    self.otherMetadata = otherMetadata
  }

  /// A real value, written with the smallest SI prefix whose integer fits in
  /// the 7 hex digits (the firmware's choice, as PalmSens' samples show:
  /// −0.4999 V is written in µV). NaN, infinities and values too large for
  /// the exa prefix are written as NaN.
  public init(
    type: MethodScriptVariableType, value: Double, status: MeasurementStatus? = nil,
    currentRange: CurrentRange? = nil, noise: Int? = nil
  ) {
    let encoded = Self.scaled(value)
    self.init(
      type: type, raw: encoded?.raw, prefix: encoded?.prefix ?? .none, status: status, currentRange: currentRange,
      noise: noise)
  }

  /// An integer value (prefix `i`).
  public init(type: MethodScriptVariableType, integer: Int) {
    self.init(type: type, raw: integer, prefix: .integer)
  }

  /// The integer and prefix for a real value: the smallest prefix whose
  /// rounded integer fits; `nil` when none does or the value is not finite.
  public static func scaled(_ value: Double) -> (raw: Int, prefix: SIPrefix)? {
    guard value.isFinite else { return nil }
    for prefix in SIPrefix.scaled {
      let scaled = (value / prefix.factor).rounded()
      if scaled >= Double(rawRange.lowerBound) && scaled <= Double(rawRange.upperBound) {
        return (Int(scaled), prefix)
      }
    }
    return nil
  }

  /// The value in the type's SI unit (NaN when written as NaN).
  public var value: Double {
    guard let raw else { return .nan }
    return Double(raw) * prefix.factor
  }

  /// The variable as the firmware writes it, e.g. `ba48D503Dp,10,288`.
  public var text: String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(24)
    write(to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends `text`'s bytes: a package line writes its variables one after
  /// another without a string each.
  func write(to bytes: inout [UInt8]) {
    bytes += type.code.utf8
    if let raw {
      Self.writeHex(raw + Self.offset, digits: 7, to: &bytes)
      bytes += prefix.rawValue.utf8
    } else {
      bytes += "     nan".utf8
    }
    if let status {
      bytes += ",1".utf8
      Self.writeHex(Int(status.rawValue & 0xF), digits: 1, to: &bytes)
    }
    if let rangeIndex {
      bytes += ",2".utf8
      Self.writeHex(Int(rangeIndex), digits: 2, to: &bytes)
    }
    if let noise {
      bytes += ",4".utf8
      Self.writeHex(max(0, noise), digits: 1, to: &bytes)
    }
    for other in otherMetadata {
      bytes.append(UInt8(ascii: ","))
      bytes += other.utf8
    }
  }

  public var description: String { text }

  /// Decodes one variable of a package (the text between `;`s).
  public init(text: Substring) throws(MethodScriptFormatError) {
    let fields = text.split(separator: ",", omittingEmptySubsequences: false).map { ArraySlice($0.utf8) }
    try self.init(fields: fields) { String(text) }
  }

  /// Decodes one variable of printable ASCII, as `init(text:)` does, from
  /// its bytes: the same result without making strings (a package line's
  /// variables, read as they arrive).
  init(printable bytes: ArraySlice<UInt8>) throws(MethodScriptFormatError) {
    try self.init(fields: bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)) {
      String(decoding: bytes, as: UTF8.self)
    }
  }

  /// Decodes a variable from its `,`-separated fields' bytes; `text` is the
  /// variable as written, for an error.
  private init(fields: [ArraySlice<UInt8>], text: () -> String) throws(MethodScriptFormatError) {
    let head = fields[0]
    guard head.count == 10 else {
      throw MethodScriptFormatError(text(), "a variable is 2 type letters and 8 value characters")
    }
    let at = head.startIndex
    guard let type = MethodScriptVariableType(code: String(decoding: head[at..<(at + 2)], as: UTF8.self)) else {
      throw MethodScriptFormatError(text(), "the variable type is not two lowercase letters")
    }
    var raw: Int?
    var prefix = SIPrefix.none
    if !head[(at + 2)..<(at + 10)].elementsEqual("     nan".utf8) {
      guard let hex = Self.parseHex(head[(at + 2)..<(at + 9)]) else {
        throw MethodScriptFormatError(text(), "the value is not 7 hex digits")
      }
      guard let parsed = SIPrefix(rawValue: Character(UnicodeScalar(head[at + 9]))) else {
        throw MethodScriptFormatError(text(), "unknown SI prefix '\(Character(UnicodeScalar(head[at + 9])))'")
      }
      raw = hex - Self.offset
      prefix = parsed
    }
    var status: MeasurementStatus?
    var range: UInt8?
    var noise: Int?
    var other: [String] = []
    for field in fields.dropFirst() {
      guard let kind = field.first, let number = Self.parseHex(field.dropFirst()) else {
        throw MethodScriptFormatError(
          text(), "metadata '\(String(decoding: field, as: UTF8.self))' is not a kind digit and hex digits")
      }
      switch kind {
      case UInt8(ascii: "1") where field.count == 2: status = MeasurementStatus(rawValue: UInt8(number))
      case UInt8(ascii: "2") where field.count == 3: range = UInt8(number)
      case UInt8(ascii: "4"): noise = number
      default: other.append(String(decoding: field, as: UTF8.self))
      }
    }
    self.init(type: type, raw: raw, prefix: prefix, status: status, noise: noise, otherMetadata: other)
    self.rangeIndex = range
  }

  private static func parseHex(_ bytes: some Collection<UInt8>) -> Int? {
    guard !bytes.isEmpty, bytes.count <= 8 else { return nil }
    var result = 0
    for byte in bytes {
      let digit: Int
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = Int(byte - UInt8(ascii: "A")) + 10
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = Int(byte - UInt8(ascii: "a")) + 10
      default: return nil
      }
      result = result * 16 + digit
    }
    return result
  }

  /// `hex(value, digits:)`'s bytes, appended.
  private static func writeHex(_ value: Int, digits: Int, to bytes: inout [UInt8]) {
    guard value >= 0 else {
      bytes += hex(value, digits: digits).utf8
      return
    }
    var count = 1
    while count < 16, value >> (4 * count) != 0 { count += 1 }
    for _ in count..<max(count, digits) { bytes.append(UInt8(ascii: "0")) }
    for shift in stride(from: 4 * (count - 1), through: 0, by: -4) {
      let digit = UInt8(value >> shift & 0xF)
      bytes.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "A") + digit - 10)
    }
  }

  private static func hex(_ value: Int, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
  }
}
