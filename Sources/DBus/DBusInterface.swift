/// An interface an exported object implements: its methods, properties and
/// signals. Handlers run off the connection's queue, one task per call.
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

/// A method of an exported interface.
public struct DBusMethod: Sendable {
  public let name: String
  /// The signature the call's arguments must have; calls with other
  /// arguments are refused with `InvalidArgs` before the handler runs.
  public let input: DBusSignature
  /// The signature the reply will have.
  public let output: DBusSignature
  public let handler: DBusMethodHandler

  public init(
    name: String, input: String = "", output: String = "", handler: @escaping DBusMethodHandler
  ) throws(DBusError) {
    try DBusName.validateMember(name)
    self.name = name
    self.input = try DBusSignature(input)
    self.output = try DBusSignature(output)
    self.handler = handler
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
