/// How a characteristic value is written.
public enum WriteType: String, Hashable, Sendable, Codable, CustomStringConvertible {
  /// ATT Write Request: the peripheral answers, and may answer with an error.
  case withResponse
  /// ATT Write Command: no answer; the value must fit in one packet (ATT_MTU − 3).
  case withoutResponse

  /// The BlueZ `WriteValue` option `type`: `"request"` or `"command"`.
  public var bluezType: String {
    switch self {
    case .withResponse: "request"
    case .withoutResponse: "command"
    }
  }

  /// The write type for a BlueZ `type` option (`"request"`, `"command"`;
  /// `"reliable"` counts as a write with response); `nil` for anything else.
  public init?(bluezType: String) {
    switch bluezType {
    case "request", "reliable": self = .withResponse
    case "command": self = .withoutResponse
    default: return nil
    }
  }

  public var description: String {
    switch self {
    case .withResponse: "with response"
    case .withoutResponse: "without response"
    }
  }
}
