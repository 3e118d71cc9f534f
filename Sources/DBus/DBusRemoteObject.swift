/// An object on another connection, addressed by bus name and path: calls,
/// properties and `GetManagedObjects` without repeating the address each time.
public struct DBusRemoteObject: Sendable {
  public let connection: DBusConnection
  public let destination: String
  public let path: ObjectPath

  public init(connection: DBusConnection, destination: String, path: ObjectPath) throws(DBusError) {
    try DBusName.validateBusName(destination)
    self.connection = connection
    self.destination = destination
    self.path = path
  }

  /// Calls a method and returns the reply's arguments.
  public func call(
    _ interface: String, _ method: String, _ arguments: [DBusValue] = [], timeout: Duration? = nil
  ) async throws -> [DBusValue] {
    try await connection.call(
      destination: destination, path: path, interface: interface, method: method, arguments: arguments,
      timeout: timeout)
  }

  /// `org.freedesktop.DBus.Properties.Get`, with the variant unwrapped.
  public func property(_ interface: String, _ name: String) async throws -> DBusValue {
    let reply = try await call("org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
    guard let value = reply.first else { throw DBusError.failed("Get returned nothing") }
    return value.unwrapped
  }

  /// `org.freedesktop.DBus.Properties.GetAll`, variants unwrapped.
  public func properties(_ interface: String) async throws -> [String: DBusValue] {
    let reply = try await call("org.freedesktop.DBus.Properties", "GetAll", [.string(interface)])
    guard let all = reply.first?.dictionary else { throw DBusError.failed("GetAll returned \(reply)") }
    return all.mapValues(\.unwrapped)
  }

  /// `org.freedesktop.DBus.Properties.Set`.
  public func setProperty(_ interface: String, _ name: String, _ value: DBusValue) async throws {
    _ = try await call("org.freedesktop.DBus.Properties", "Set", [.string(interface), .string(name), .variant(value)])
  }

  /// `org.freedesktop.DBus.ObjectManager.GetManagedObjects`: path → interface → property → value.
  public func managedObjects() async throws -> [ObjectPath: [String: [String: DBusValue]]] {
    let reply = try await call("org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
    guard case .dictionary(_, _, let objects)? = reply.first else {
      throw DBusError.failed("GetManagedObjects returned \(reply)")
    }
    var result: [ObjectPath: [String: [String: DBusValue]]] = [:]
    for object in objects {
      guard let path = object.key.objectPath, let interfaces = object.value.dictionary else { continue }
      result[path] = interfaces.compactMapValues { $0.dictionary?.mapValues(\.unwrapped) }
    }
    return result
  }

  /// `org.freedesktop.DBus.Introspectable.Introspect`.
  public func introspect() async throws -> String {
    try await call("org.freedesktop.DBus.Introspectable", "Introspect").first?.string ?? ""
  }
}
