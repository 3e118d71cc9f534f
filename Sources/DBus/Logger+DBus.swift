import Logging

extension Logger {
  /// The log of DBus, libdbus and the connection's calls (`doppel.dbus`).
  static let dbus = Logger(label: "doppel.dbus")
}
