/// A rule selecting signals, as given to the bus's `AddMatch`, and checked
/// again locally so that each subscription gets exactly what it asked for.
public struct DBusMatchRule: Hashable, Sendable, CustomStringConvertible {
  /// The sender: a unique name (`:1.42`) or a well-known name (`org.bluez`),
  /// matched against the name's current owner.
  public var sender: String?
  public var interface: String?
  public var member: String?
  /// Only signals from exactly this object.
  public var path: ObjectPath?
  /// Only signals from this object or below it.
  public var pathNamespace: ObjectPath?
  /// Only signals whose first argument is this string.
  public var arg0: String?

  public init(
    sender: String? = nil, interface: String? = nil, member: String? = nil, path: ObjectPath? = nil,
    pathNamespace: ObjectPath? = nil, arg0: String? = nil
  ) throws(DBusError) {
    if let sender { try DBusName.validateBusName(sender) }
    if let interface { try DBusName.validateInterface(interface) }
    if let member { try DBusName.validateMember(member) }
    if let arg0 {
      try DBusName.validateString(arg0)
    }
    if path != nil, pathNamespace != nil {
      throw .invalidArgs("a match rule takes path or pathNamespace, not both")
    }
    self.sender = sender
    self.interface = interface
    self.member = member
    self.path = path
    self.pathNamespace = pathNamespace
    self.arg0 = arg0
  }

  /// The rule in the bus's syntax, e.g. `type='signal',sender='org.bluez'`.
  public var description: String {
    var parts = ["type='signal'"]
    func add(_ key: String, _ value: String?) {
      guard let value else { return }
      // A quote inside a value is written '\'' (close, escaped quote, reopen).
      parts.append("\(key)='\(value.replacingOccurrences(of: "'", with: "'\\''"))'")
    }
    add("sender", sender)
    add("interface", interface)
    add("member", member)
    add("path", path?.rawValue)
    add("path_namespace", pathNamespace?.rawValue)
    add("arg0", arg0)
    return parts.joined(separator: ",")
  }

  /// Whether `signal` matches, given the current owner of a well-known sender.
  func matches(_ signal: DBusMessage, senderOwner: String?) -> Bool {
    guard signal.kind == .signal else { return false }
    if let sender {
      guard signal.sender == sender || (senderOwner != nil && signal.sender == senderOwner) else { return false }
    }
    if let interface, signal.interface != interface { return false }
    if let member, signal.member != member { return false }
    if let path, signal.path != path { return false }
    if let pathNamespace {
      guard let signalPath = signal.path, signalPath == pathNamespace || signalPath.isDescendant(of: pathNamespace)
      else { return false }
    }
    if let arg0 {
      guard case .string(let first)? = signal.body.first, first == arg0 else { return false }
    }
    return true
  }

  /// Whether the sender is a well-known name whose owner must be tracked.
  var wellKnownSender: String? {
    guard let sender, !sender.hasPrefix(":"), sender != "org.freedesktop.DBus" else { return nil }
    return sender
  }
}
