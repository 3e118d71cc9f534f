/// A command written to the control characteristic: one byte counting the
/// bytes that follow, ASCII text, a newline (`[0x02, 0x64, 0x0A]` is `d`).
public enum MuseCommand: Hashable, Sendable {
  /// `v1`: the firmware and hardware versions.
  case version
  /// `s`: the headband's status (name, serial, battery, preset).
  case status
  /// `h`: halt streaming.
  case halt
  /// `d`: start (or resume) streaming.
  case resume
  /// `k`: keep-alive.
  case keepAlive
  /// `*1`: reset: streaming stops and the default preset returns.
  case reset
  /// `pNN`: select a preset (`p21`, `p50`, …).
  case preset(String)
  /// Well framed, but not a command this headband knows.
  case unknown(String)

  /// Why a write to the control characteristic is not a command at all.
  public enum FrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing was written.
    case empty
    /// The first byte does not count the bytes that follow it.
    case lengthMismatch(declared: Int, actual: Int)
    /// The text does not end with a newline.
    case missingNewline
    /// A byte that is not printable ASCII.
    case notASCII(byte: UInt8, at: Int)

    public var description: String {
      switch self {
      case .empty: "empty write"
      case .lengthMismatch(let declared, let actual): "length byte says \(declared), \(actual) bytes follow"
      case .missingNewline: "the command does not end with a newline"
      case .notASCII(let byte, let at): "byte \(at) is 0x\(String(byte, radix: 16)), not printable ASCII"
      }
    }
  }

  /// The command in a control write.
  public init(frame bytes: [UInt8]) throws(FrameError) {
    guard let declared = bytes.first else { throw .empty }
    guard Int(declared) == bytes.count - 1, declared > 0 else {
      throw .lengthMismatch(declared: Int(declared), actual: bytes.count - 1)
    }
    guard bytes.last == 0x0A else { throw .missingNewline }
    let text = bytes[1..<(bytes.count - 1)]
    for (offset, byte) in text.enumerated() where byte < 0x20 || byte > 0x7E {
      throw .notASCII(byte: byte, at: offset + 1)
    }
    self.init(text: String(decoding: text, as: UTF8.self))
  }

  /// The command named by `text` (without framing).
  public init(text: String) {
    switch text {
    case "v1": self = .version
    case "s": self = .status
    case "h": self = .halt
    case "d": self = .resume
    case "k": self = .keepAlive
    case "*1": self = .reset
    case let preset where preset.hasPrefix("p") && preset.count > 1: self = .preset(preset)
    default: self = .unknown(text)
    }
  }

  /// The framed bytes for `text`, as clients write them.
  public static func frame(_ text: String) -> [UInt8] {
    let body = Array(text.utf8) + [0x0A]
    return [UInt8(body.count)] + body
  }
}
