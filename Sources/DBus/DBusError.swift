/// An error from D-Bus: either an error reply from a peer, carrying the peer's
/// error name (e.g. `org.bluez.Error.NotPermitted`), or a local failure, named
/// with the standard `org.freedesktop.DBus.Error.*` name that fits it.
///
/// Method handlers throw a `DBusError` to send that error name back to the caller.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The D-Bus error name; it plays the part of an error code.
  public var name: String
  /// A human-readable message.
  public var message: String

  public init(name: String, message: String) {
    self.name = name
    self.message = message
  }

  public var description: String { message.isEmpty ? name : "\(name): \(message)" }

  /// Standard error names from the D-Bus specification.
  public enum Name {
    public static let failed = "org.freedesktop.DBus.Error.Failed"
    public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let timeout = "org.freedesktop.DBus.Error.Timeout"
    public static let objectPathInUse = "org.freedesktop.DBus.Error.ObjectPathInUse"
    public static let addressInUse = "org.freedesktop.DBus.Error.AddressInUse"
    public static let badAddress = "org.freedesktop.DBus.Error.BadAddress"
  }

  static func invalidArgs(_ message: String) -> DBusError {
    DBusError(name: Name.invalidArgs, message: message)
  }

  static func invalidSignature(_ signature: String, _ what: String) -> DBusError {
    DBusError(name: Name.invalidSignature, message: "invalid signature \"\(signature)\": \(what)")
  }

  static func disconnected(_ message: String = "the connection is closed") -> DBusError {
    DBusError(name: Name.disconnected, message: message)
  }

  static func failed(_ message: String) -> DBusError {
    DBusError(name: Name.failed, message: message)
  }
}
