import GATT

/// A failure of the E4 link: a code to match on and a message for people.
public struct E4LinkError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Code: Hashable, Sendable {
    /// Discovery without a successful `authenticate(apiKey:)` (the SDK raises an exception).
    case notAuthenticated
    /// Bluetooth LE is not available.
    case bluetoothNotAvailable
    /// The peripheral lacks a characteristic of the E4 profile.
    case notAnE4
    /// The operation needs a connected wristband.
    case notConnected
    /// A connection attempt is already in progress or made.
    case busy
    /// The transport failed (the GATT error says how).
    case link(GATTError.Code)
  }

  public var code: Code
  public var message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  init(_ error: GATTError, while doing: String) {
    self.init(.link(error.code), "\(doing): \(error.message)")
  }

  public var description: String { message }
}
