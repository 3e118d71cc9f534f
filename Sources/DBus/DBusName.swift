import CDBus

/// Validation of the names a message carries. libdbus asserts (and aborts the
/// process) when handed an invalid name, so every name is checked here first
/// with libdbus's own non-aborting validators.
public enum DBusName {
  /// Throws unless `name` is a valid interface name (`org.bluez.Adapter1`).
  public static func validateInterface(_ name: String) throws(DBusError) {
    try check(name, "interface name", dbus_validate_interface)
  }

  /// Throws unless `name` is a valid member (method or signal) name.
  public static func validateMember(_ name: String) throws(DBusError) {
    try check(name, "member name", dbus_validate_member)
  }

  /// Throws unless `name` is a valid error name.
  public static func validateErrorName(_ name: String) throws(DBusError) {
    try check(name, "error name", dbus_validate_error_name)
  }

  /// Throws unless `name` is a valid unique or well-known bus name.
  public static func validateBusName(_ name: String) throws(DBusError) {
    try check(name, "bus name", dbus_validate_bus_name)
  }

  /// Throws unless `path` is a valid object path.
  public static func validatePath(_ path: String) throws(DBusError) {
    try check(path, "object path", dbus_validate_path)
  }

  /// Throws unless `text` can travel as a D-Bus string (no NUL character).
  public static func validateString(_ text: String) throws(DBusError) {
    if text.utf8.contains(0) {
      throw .invalidArgs("string contains a NUL character: \(text.debugDescription)")
    }
  }

  private static func check(
    _ name: String, _ kind: String,
    _ validator: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t
  ) throws(DBusError) {
    guard !name.utf8.contains(0) else {
      throw .invalidArgs("invalid \(kind) \(name.debugDescription): contains a NUL character")
    }
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    if name.withCString({ validator($0, &error) }) != 0 { return }
    let reason = error.message.map { String(cString: $0) } ?? "rejected by libdbus"
    throw .invalidArgs("invalid \(kind) \(name.debugDescription): \(reason)")
  }
}
