import Logging

extension Logger {
  /// The log of BlueZ, both roles: what bluetoothd calls on hosted devices, links, registrations (`doppel.bluez`).
  static let bluez = Logger(label: "doppel.bluez")
}
