/// One Socket.IO packet, the data of an Engine.IO message:
/// `<type>[<attachments>-][<namespace>,][<ack id>][<JSON data>]`, for example
/// `42["message",{"amplitude":"0.81","time":"…"}]` (message, event, main namespace).
struct SocketIOPacket: Hashable, Sendable {
  enum Kind: Character, Hashable, Sendable {
    case connect = "0"
    case disconnect = "1"
    case event = "2"
    case ack = "3"
    case connectError = "4"
    case binaryEvent = "5"
    case binaryAck = "6"
  }

  /// What is wrong with a message that is not a Socket.IO packet.
  struct Malformed: Error, Hashable, CustomStringConvertible {
    var description: String
  }

  var kind: Kind
  /// `/` unless the packet names another.
  var namespace = "/"
  /// For binary packets, how many binary frames follow.
  var attachments = 0
  var ackID: Int?
  var data: JSONValue?

  init(kind: Kind, namespace: String = "/", ackID: Int? = nil, data: JSONValue? = nil) {
    self.kind = kind
    self.namespace = namespace
    self.ackID = ackID
    self.data = data
  }

  /// An event: its name and arguments.
  static func event(_ name: String, _ arguments: JSONValue..., ackID: Int? = nil) -> SocketIOPacket {
    SocketIOPacket(kind: .event, ackID: ackID, data: .array([.string(name)] + arguments))
  }

  /// Reads the data of one Engine.IO message.
  init(text: String) throws(Malformed) {
    var rest = Substring(text)
    guard let first = rest.first else {
      throw Malformed(description: "empty Socket.IO packet: expected a type digit 0-6 after the Engine.IO \"4\"")
    }
    guard let kind = Kind(rawValue: first) else {
      throw Malformed(
        description: "\"\(first)\" is not a Socket.IO packet type: expected a digit 0-6 in \"4\(Self.shown(text))\"")
    }
    self.kind = kind
    rest = rest.dropFirst()
    if kind == .binaryEvent || kind == .binaryAck {
      let digits = rest.prefix { $0.isASCII && $0.isNumber }
      guard !digits.isEmpty, rest.dropFirst(digits.count).first == "-", let count = Int(digits) else {
        throw Malformed(description: "a binary packet needs its attachment count and \"-\": \"4\(Self.shown(text))\"")
      }
      attachments = count
      rest = rest.dropFirst(digits.count + 1)
    }
    if rest.first == "/" {
      let end = rest.firstIndex(of: ",") ?? rest.endIndex
      namespace = String(rest[..<end])
      rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
    }
    let digits = rest.prefix { $0.isASCII && $0.isNumber }
    if !digits.isEmpty {
      guard let id = Int(digits) else {
        throw Malformed(description: "ack id \(digits) is too large in \"4\(Self.shown(text))\"")
      }
      ackID = id
      rest = rest.dropFirst(digits.count)
    }
    if !rest.isEmpty {
      guard let value = JSONValue.parse(rest) else {
        throw Malformed(description: "the data of \"4\(Self.shown(text))\" is not JSON")
      }
      data = value
    }
  }

  /// The packet as the data of an Engine.IO message.
  var text: String {
    var text = String(kind.rawValue)
    if kind == .binaryEvent || kind == .binaryAck { text += "\(attachments)-" }
    if namespace != "/" { text += namespace + "," }
    if let ackID { text += String(ackID) }
    if let data { text += data.text }
    return text
  }

  /// An event's name and arguments, or what is wrong with them.
  func event() throws(Malformed) -> (name: String, arguments: [JSONValue]) {
    guard case .array(let items) = data else {
      throw Malformed(
        description: "an event's data must be an array [\"name\", …], got \(data?.kind ?? "nothing")")
    }
    guard case .string(let name)? = items.first else {
      throw Malformed(
        description:
          "an event's array must start with its name (a string), got \(items.first?.kind ?? "an empty array")")
    }
    return (name, Array(items.dropFirst()))
  }

  private static func shown(_ text: String) -> String {
    text.count > 40 ? text.prefix(40) + "…" : text
  }
}
