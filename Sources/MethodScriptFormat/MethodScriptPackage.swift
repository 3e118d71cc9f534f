/// A MethodSCRIPT measurement data package: one line `P` + variables separated
/// by `;`, e.g. `Pda7F85F3Fu;ba48D503Dp,10,288`.
public struct MethodScriptPackage: Hashable, Sendable, CustomStringConvertible {
  /// The variables, in the order the script added them (`pck_add`).
  public var values: [MethodScriptValue]

  public init(_ values: [MethodScriptValue]) { self.values = values }

  /// The line as the firmware writes it, without its `\n`.
  public var line: String {
    var bytes: [UInt8] = [UInt8(ascii: "P")]
    bytes.reserveCapacity(1 + 24 * values.count)
    for (index, value) in values.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: ";")) }
      value.write(to: &bytes)
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  public var description: String { line }

  /// Decodes a package line (with or without its `\n`/`\r\n`).
  public init(line: String) throws(MethodScriptFormatError) {
    if let values = try Self.printableValues(line) {
      self.init(values)
      return
    }
    var body = Substring(line)
    while let last = body.last, last == "\n" || last == "\r" { body = body.dropLast() }
    guard body.first == "P" else { throw MethodScriptFormatError(line, "a package starts with 'P'") }
    body = body.dropFirst()
    guard !body.isEmpty else { throw MethodScriptFormatError(line, "a package holds at least one variable") }
    var values: [MethodScriptValue] = []
    for field in body.split(separator: ";", omittingEmptySubsequences: false) {
      values.append(try MethodScriptValue(text: field))
    }
    self.init(values)
  }

  /// The values of a line of printable ASCII alone (a device's, its line
  /// end taken off: the client's case), read from its bytes, as the
  /// character-wise reading reads them; `nil` for any other line, which that
  /// reading takes.
  private static func printableValues(_ line: String) throws(MethodScriptFormatError) -> [MethodScriptValue]? {
    let bytes = Array(line.utf8)
    guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
    guard bytes.first == UInt8(ascii: "P") else { throw MethodScriptFormatError(line, "a package starts with 'P'") }
    guard bytes.count > 1 else { throw MethodScriptFormatError(line, "a package holds at least one variable") }
    var values: [MethodScriptValue] = []
    var start = 1
    while true {
      let end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
      values.append(try MethodScriptValue(printable: bytes[start..<end]))
      guard end < bytes.endIndex else { return values }
      start = end + 1
    }
  }

  /// The first value of a type.
  public func first(_ type: MethodScriptVariableType) -> MethodScriptValue? {
    values.first { $0.type == type }
  }

  /// The applied (set) potential in V (`da`).
  public var potential: Double? { first(.appliedPotential)?.value }
  /// The WE current in A (`ba`).
  public var current: Double? { first(.weCurrent)?.value }
  /// The applied frequency in Hz (`dc`).
  public var frequency: Double? { first(.appliedFrequency)?.value }
  /// The real part of the impedance in Ω (`cc`).
  public var zReal: Double? { first(.zReal)?.value }
  /// The imaginary part of the impedance in Ω (`cd`).
  public var zImaginary: Double? { first(.zImaginary)?.value }
  /// The time in s (`eb`).
  public var time: Double? { first(.time)?.value }
  /// The status of the first value that carries one.
  public var status: MeasurementStatus? { values.lazy.compactMap(\.status).first }
  /// The current range of the first value that carries one.
  public var currentRange: CurrentRange? { values.lazy.compactMap(\.currentRange).first }
}
