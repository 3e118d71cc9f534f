import Foundation

/// Which bus to connect to.
public enum DBusBusAddress: Sendable, Hashable, CustomStringConvertible {
  /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, or the standard socket.
  case system
  /// The session bus: `DBUS_SESSION_BUS_ADDRESS`.
  case session
  /// A bus at an explicit address, e.g. `unix:path=/run/lab/bus`.
  case address(String)

  /// The address string libdbus connects to.
  public func resolved(environment: [String: String] = ProcessInfo.processInfo.environment)
    throws(DBusError) -> String
  {
    switch self {
    case .system:
      return environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unix:path=/var/run/dbus/system_bus_socket"
    case .session:
      guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
        throw DBusError(
          name: DBusError.Name.badAddress,
          message: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set (run under dbus-run-session)")
      }
      return address
    case .address(let address):
      return address
    }
  }

  public var description: String {
    switch self {
    case .system: "system bus"
    case .session: "session bus"
    case .address(let address): address
    }
  }
}
