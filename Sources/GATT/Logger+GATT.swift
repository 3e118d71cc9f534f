import Logging

extension Logger {
  /// The log of the GATT seams and the in-process loopback (`doppel.gatt`).
  public static let gatt = Logger(label: "doppel.gatt")
}
