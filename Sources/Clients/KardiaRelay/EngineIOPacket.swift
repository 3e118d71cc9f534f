/// One Engine.IO packet in a WebSocket text frame: a type digit, then its data
/// (`0{…}` open, `1` close, `2` ping, `3` pong, `4…` message, `5` upgrade, `6` noop).
enum EngineIOPacket: Hashable, Sendable {
  case open(String)
  case close
  case ping(String)
  case pong(String)
  case message(String)
  case upgrade
  case noop

  /// What is wrong with a text frame that is not an Engine.IO packet.
  struct Malformed: Error, Hashable, CustomStringConvertible {
    var description: String
  }

  /// Reads one text frame.
  init(text: String) throws(Malformed) {
    guard let type = text.first else {
      throw Malformed(description: "empty Engine.IO packet: expected a type digit 0-6")
    }
    let data = String(text.dropFirst())
    switch type {
    case "0": self = .open(data)
    case "1": self = .close
    case "2": self = .ping(data)
    case "3": self = .pong(data)
    case "4": self = .message(data)
    case "5": self = .upgrade
    case "6": self = .noop
    default:
      let shown = text.prefix(20)
      throw Malformed(
        description: "not an Engine.IO packet: \"\(shown)\(text.count > 20 ? "…" : "")\" starts with "
          + "\"\(type)\", expected a type digit 0-6")
    }
  }

  /// The packet as a text frame.
  var text: String {
    switch self {
    case .open(let data): "0" + data
    case .close: "1"
    case .ping(let data): "2" + data
    case .pong(let data): "3" + data
    case .message(let data): "4" + data
    case .upgrade: "5"
    case .noop: "6"
    }
  }
}
