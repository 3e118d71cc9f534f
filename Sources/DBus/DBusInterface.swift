/// An interface an exported object implements: its methods, properties and
/// signals. Handlers run off the connection's thread, one task per call,
/// unless a method is made `ordered` or `immediate` (see ``DBusMethod``).
public struct DBusInterface: Sendable {
  public let name: String
  public var methods: [DBusMethod]
  public var properties: [DBusProperty]
  public var signals: [DBusSignalDescription]

  public init(
    name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
    signals: [DBusSignalDescription] = []
  ) throws(DBusError) {
    try DBusName.validateInterface(name)
    self.name = name
    self.methods = methods
    self.properties = properties
    self.signals = signals
  }

  func method(named member: String) -> DBusMethod? {
    methods.first { $0.name == member }
  }

  func property(named member: String) -> DBusProperty? {
    properties.first { $0.name == member }
  }
}

/// A method handler: receives the call message, returns the reply's body or
/// throws. A thrown ``DBusError`` is sent back with its name; any other error
/// as `org.freedesktop.DBus.Error.Failed`.
public typealias DBusMethodHandler = @Sendable (DBusMessage) async throws -> [DBusValue]

/// A handler that must see calls in the order they arrived: it is called
/// synchronously on the connection's thread, must return at once (typically
/// after handing the call to an ordered queue of its own), and answers later
/// through the ``DBusMethodReply``.
public typealias DBusOrderedMethodHandler = @Sendable (DBusMessage, DBusMethodReply) -> Void

/// A handler that answers at once: it is called synchronously on the
/// connection's thread, in arrival order, and its result (or thrown error) is
/// the reply, sent before the connection reads on. For quick work that does
/// not wait (a value kept in memory, an echo): no task is started and no
/// thread woken for the call.
public typealias DBusImmediateMethodHandler = @Sendable (DBusMessage) throws -> [DBusValue]

/// A method of an exported interface.
public struct DBusMethod: Sendable {
  /// How the connection invokes the method.
  enum Invocation: Sendable {
    /// One task per call: calls may overlap and finish in any order.
    case concurrent(DBusMethodHandler)
    /// In arrival order, on the connection's thread.
    case ordered(DBusOrderedMethodHandler)
    /// On the connection's thread, answered on return.
    case immediate(DBusImmediateMethodHandler)
  }

  public let name: String
  /// The signature the call's arguments must have; calls with other
  /// arguments are refused with `InvalidArgs` before the handler runs.
  public let input: DBusSignature
  /// The signature the reply will have.
  public let output: DBusSignature
  let invocation: Invocation

  /// A method whose calls each run in a task of their own.
  public init(
    name: String, input: String = "", output: String = "", handler: @escaping DBusMethodHandler
  ) throws(DBusError) {
    try self.init(name: name, input: input, output: output, invocation: .concurrent(handler))
  }

  /// A method whose calls reach `handler` in the order they arrived.
  public init(
    name: String, input: String = "", output: String = "", ordered handler: @escaping DBusOrderedMethodHandler
  ) throws(DBusError) {
    try self.init(name: name, input: input, output: output, invocation: .ordered(handler))
  }

  /// A method whose calls `handler` answers on the connection's thread as
  /// they arrive, without a task: its return value is the reply's body.
  public init(
    name: String, input: String = "", output: String = "", immediate handler: @escaping DBusImmediateMethodHandler
  ) throws(DBusError) {
    try self.init(name: name, input: input, output: output, invocation: .immediate(handler))
  }

  private init(name: String, input: String, output: String, invocation: Invocation) throws(DBusError) {
    try DBusName.validateMember(name)
    self.name = name
    self.input = try DBusSignature(input)
    self.output = try DBusSignature(output)
    self.invocation = invocation
  }
}

/// The answer to one call of an ordered method. Answer exactly once; an
/// answer to a call that wanted none is dropped, as D-Bus requires.
public struct DBusMethodReply: Sendable {
  let connection: DBusConnection
  let call: DBusMessage
  let output: DBusSignature

  /// Sends the reply's body; a body that does not match the method's
  /// declared output is answered with `Failed` instead.
  public func send(_ body: [DBusValue] = []) async {
    let returned = DBusSignature(body.map(\.type))
    let result: Result<[DBusValue], DBusError> =
      returned == output
      ? .success(body) : .failure(.failed("\(call.member ?? "") returned (\(returned)), declared (\(output))"))
    await connection.reply(call, result)
  }

  /// Answers with an error.
  public func fail(_ error: DBusError) async {
    await connection.reply(call, .failure(error))
  }
}

/// A property of an exported interface. Its current value is kept by the
/// connection and changed with ``DBusConnection/updateProperties(at:interface:_:invalidated:)``.
public struct DBusProperty: Sendable {
  /// How peers may use a property.
  public enum Access: String, Sendable {
    case read, write, readwrite
  }

  /// Checks a value a peer sets with `org.freedesktop.DBus.Properties.Set`;
  /// throw to refuse it. The value is stored only when this returns.
  public typealias SetHandler = @Sendable (DBusValue) async throws -> Void

  public let name: String
  public let type: DBusType
  public let access: Access
  /// The value before any update.
  public let initialValue: DBusValue
  /// Whether changes are announced with `PropertiesChanged`.
  public let emitsChanged: Bool
  public let onSet: SetHandler?

  public init(
    name: String, value: DBusValue, access: Access = .read, emitsChanged: Bool = true,
    onSet: SetHandler? = nil
  ) throws(DBusError) {
    try DBusName.validateMember(name)
    try value.validate()
    self.name = name
    self.type = value.type
    self.initialValue = value
    self.access = access
    self.emitsChanged = emitsChanged
    self.onSet = onSet
  }
}

/// A signal an exported interface declares (for introspection).
public struct DBusSignalDescription: Sendable {
  public let name: String
  public let arguments: DBusSignature

  public init(name: String, arguments: String = "") throws(DBusError) {
    try DBusName.validateMember(name)
    self.name = name
    self.arguments = try DBusSignature(arguments)
  }
}
