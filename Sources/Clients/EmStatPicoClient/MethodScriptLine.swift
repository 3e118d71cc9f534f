import MethodScriptFormat

/// One line of a MethodSCRIPT device's output, classified the way PalmSens'
/// examples read it.
public enum MethodScriptLine: Hashable, Sendable {
  /// `e`: the device accepted the execute command.
  case executing
  /// `Mxxxx`: a measurement loop starts (its hex id).
  case measurementLoopStarted(String)
  /// `*`: the measurement loop ends.
  case measurementLoopEnded
  /// `Cxxxx`: a scan of a multi-scan loop starts.
  case scanStarted(String)
  /// `-`: the scan ends.
  case scanEnded
  /// `L`: a (non-measurement) loop starts.
  case loopStarted
  /// `+`: that loop ends.
  case loopEnded
  /// `P…`: a data package.
  case package(MethodScriptPackage)
  /// A `P` line that does not decode.
  case malformedPackage(String, reason: String)
  /// `Z`: the device acknowledged an abort.
  case abortAcknowledged
  /// An error line: its code, and the text after `!XXXX` (e.g. `: Line 3, Col 1`).
  case error(code: UInt16, detail: String)
  /// The empty line that ends a script's output.
  case end
  /// Anything else (answers to other commands, `send_string` output).
  case text(String)

  /// Classifies one line (without its `\n`).
  public init(_ line: String) {
    if let (code, detail) = Self.error(in: line) {
      self = .error(code: code, detail: detail)
      return
    }
    let bytes = Array(line.utf8)
    guard let first = bytes.first else {
      self = .end
      return
    }
    var rest: String { String(decoding: bytes.dropFirst(), as: UTF8.self) }
    let isLoopID = bytes.count == 5 && bytes.dropFirst().allSatisfy(Self.isHexDigit)
    switch first {
    case UInt8(ascii: "e") where bytes.count == 1: self = .executing
    case UInt8(ascii: "M") where isLoopID: self = .measurementLoopStarted(rest)
    case UInt8(ascii: "C") where isLoopID: self = .scanStarted(rest)
    case UInt8(ascii: "*") where bytes.count == 1: self = .measurementLoopEnded
    case UInt8(ascii: "-") where bytes.count == 1: self = .scanEnded
    case UInt8(ascii: "L") where bytes.count == 1: self = .loopStarted
    case UInt8(ascii: "+") where bytes.count == 1: self = .loopEnded
    case UInt8(ascii: "Z") where bytes.count == 1: self = .abortAcknowledged
    case UInt8(ascii: "P"):
      do {
        self = .package(try MethodScriptPackage(line: line))
      } catch {
        self = .malformedPackage(line, reason: error.reason)
      }
    default: self = .text(line)
    }
  }

  /// The error in a line of the form `….!XXXX` or `….!XXXX:…` (PalmSens'
  /// pattern `.*!([0-9A-Fa-f]{4})(:.*|\n)`).
  static func error(in line: String) -> (UInt16, String)? {
    let bytes = Array(line.utf8)
    for index in bytes.indices.reversed() where bytes[index] == UInt8(ascii: "!") {
      let end = index + 5
      guard end <= bytes.count, bytes[(index + 1)..<end].allSatisfy(isHexDigit) else { continue }
      let after = bytes[end...]
      guard after.isEmpty || after.first == UInt8(ascii: ":") else { continue }
      let code = UInt16(String(decoding: bytes[(index + 1)..<end], as: UTF8.self), radix: 16)!
      return (code, String(decoding: after, as: UTF8.self))
    }
    return nil
  }

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
  }
}
