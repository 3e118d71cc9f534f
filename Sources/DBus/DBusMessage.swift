/// A D-Bus message as Swift values: header fields and a decoded body.
public struct DBusMessage: Sendable {
  /// The four kinds of message.
  public enum Kind: Sendable, Hashable {
    case methodCall, methodReturn, error, signal
  }

  public var kind: Kind
  /// The sender's serial (0 until sent).
  public var serial: UInt32 = 0
  /// The serial of the call this message answers.
  public var replySerial: UInt32?
  public var path: ObjectPath?
  public var interface: String?
  public var member: String?
  public var errorName: String?
  public var destination: String?
  /// The unique name of the sender, set by the bus.
  public var sender: String?
  /// The caller does not want a reply.
  public var noReplyExpected = false
  /// The arguments.
  public var body: [DBusValue] = []

  public init(kind: Kind) {
    self.kind = kind
  }

  /// The signature of the body.
  public var signature: DBusSignature { DBusSignature(body.map(\.type)) }

  /// A method call; names are validated.
  public static func methodCall(
    destination: String?, path: ObjectPath, interface: String?, member: String,
    body: [DBusValue] = []
  ) throws(DBusError) -> DBusMessage {
    if let destination { try DBusName.validateBusName(destination) }
    if let interface { try DBusName.validateInterface(interface) }
    try DBusName.validateMember(member)
    var message = DBusMessage(kind: .methodCall)
    message.destination = destination
    message.path = path
    message.interface = interface
    message.member = member
    message.body = body
    return message
  }

  /// A signal; names are validated.
  public static func signal(
    path: ObjectPath, interface: String, member: String, body: [DBusValue] = [],
    destination: String? = nil
  ) throws(DBusError) -> DBusMessage {
    try DBusName.validateInterface(interface)
    try DBusName.validateMember(member)
    if let destination { try DBusName.validateBusName(destination) }
    var message = DBusMessage(kind: .signal)
    message.path = path
    message.interface = interface
    message.member = member
    message.body = body
    message.destination = destination
    return message
  }

  /// A method return answering `call`.
  public static func methodReturn(to call: DBusMessage, body: [DBusValue] = []) -> DBusMessage {
    var message = DBusMessage(kind: .methodReturn)
    message.replySerial = call.serial
    message.destination = call.sender
    message.body = body
    return message
  }

  /// An error reply answering `call`.
  public static func errorReply(to call: DBusMessage, error: DBusError) -> DBusMessage {
    var message = DBusMessage(kind: .error)
    message.replySerial = call.serial
    message.destination = call.sender
    message.errorName = (try? DBusName.validateErrorName(error.name)) != nil ? error.name : DBusError.Name.failed
    message.body = [.string(error.message)]
    return message
  }

  /// For an error message: the error it carries.
  public var error: DBusError? {
    guard kind == .error else { return nil }
    return DBusError(name: errorName ?? DBusError.Name.failed, message: body.first?.string ?? "")
  }
}
