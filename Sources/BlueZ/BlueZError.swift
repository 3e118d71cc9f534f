import DBus
import GATT

/// An error BlueZ answered with (`org.bluez.Error.*`), typed.
public struct BlueZError: Error, Hashable, Sendable, CustomStringConvertible {
  /// BlueZ's error names, without the `org.bluez.Error.` prefix.
  public enum Code: String, Sendable, Hashable {
    case failed = "Failed"
    case inProgress = "InProgress"
    case notPermitted = "NotPermitted"
    case notAuthorized = "NotAuthorized"
    case invalidOffset = "InvalidOffset"
    case invalidValueLength = "InvalidValueLength"
    case notSupported = "NotSupported"
    case notConnected = "NotConnected"
    case alreadyConnected = "AlreadyConnected"
    case alreadyExists = "AlreadyExists"
    case doesNotExist = "DoesNotExist"
    case notReady = "NotReady"
    case notAvailable = "NotAvailable"
    case invalidArguments = "InvalidArguments"
    case invalidLength = "InvalidLength"
    case authenticationFailed = "AuthenticationFailed"
    case connectionAttemptFailed = "ConnectionAttemptFailed"
    case notFound = "NotFound"
    case other
  }

  public var code: Code
  /// The full D-Bus error name, e.g. `org.bluez.Error.NotPermitted`.
  public var name: String
  public var message: String

  public var description: String { "\(name): \(message)" }

  /// The typed form of a D-Bus error if it is one of BlueZ's.
  public init?(_ error: DBusError) {
    let prefix = "org.bluez.Error."
    guard error.name.hasPrefix(prefix) else { return nil }
    code = Code(rawValue: String(error.name.dropFirst(prefix.count))) ?? .other
    name = error.name
    message = error.message
  }

  /// The ATT error a remote peripheral answered with, when BlueZ reports one
  /// ("Operation failed with ATT error: 0x80", "Read not permitted", …).
  public var attributeError: ATTError? {
    if let range = message.range(of: "ATT error: 0x") {
      let hex = message[range.upperBound...].prefix(2)
      if let code = UInt8(hex, radix: 16) { return ATTError(code: code) }
    }
    switch code {
    case .notPermitted: return message.lowercased().contains("write") ? .writeNotPermitted : .readNotPermitted
    case .notAuthorized: return .insufficientAuthorization
    case .invalidOffset: return .invalidOffset
    case .invalidValueLength: return .invalidAttributeValueLength
    default: return nil
    }
  }

  /// The error BlueZ expects from a GATT server for `error` (see
  /// org.bluez.GattCharacteristic(5)): application errors travel as
  /// `Failed` with the code in the message.
  static func serverReply(for error: ATTError) -> DBusError {
    let name: String
    switch error {
    case .readNotPermitted, .writeNotPermitted: name = "org.bluez.Error.NotPermitted"
    case .insufficientAuthorization, .insufficientAuthentication: name = "org.bluez.Error.NotAuthorized"
    case .invalidOffset: name = "org.bluez.Error.InvalidOffset"
    case .invalidAttributeValueLength: name = "org.bluez.Error.InvalidValueLength"
    case .requestNotSupported: name = "org.bluez.Error.NotSupported"
    default:
      return DBusError(name: "org.bluez.Error.Failed", message: String(format: "0x%02x", error.code))
    }
    return DBusError(name: name, message: error.description)
  }

  /// Converts any error from a BlueZ call into a `GATTError`.
  static func gattError(_ error: any Error, _ what: String) -> GATTError {
    if let gatt = error as? GATTError { return gatt }
    if error is CancellationError { return GATTError(.cancelled, "\(what): cancelled") }
    guard let dbus = error as? DBusError else { return GATTError(.failed, "\(what): \(error)") }
    guard let bluez = BlueZError(dbus) else {
      if dbus.name == DBusError.Name.noReply {
        return GATTError(.timeout, "\(what): BlueZ did not answer (\(dbus.message))")
      }
      if dbus.name == DBusError.Name.unknownObject { return GATTError(.notFound, "\(what): \(dbus.message)") }
      return GATTError(.failed, "\(what): \(dbus)")
    }
    if let att = bluez.attributeError { return GATTError(.attribute(att), "\(what): \(bluez)") }
    switch bluez.code {
    case .notConnected: return GATTError(.notConnected, "\(what): \(bluez)")
    case .notSupported: return GATTError(.notSupported, "\(what): \(bluez)")
    case .doesNotExist, .notFound: return GATTError(.notFound, "\(what): \(bluez)")
    case .invalidArguments, .invalidLength: return GATTError(.invalidArgument, "\(what): \(bluez)")
    default: return GATTError(.failed, "\(what): \(bluez)")
    }
  }
}
