/// A failure of a GATT operation, on either seam: a code to match on and a
/// message that says what happened.
public struct GATTError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What kind of failure.
  public enum Code: Hashable, Sendable {
    /// There is no connection (never connected, or already disconnected).
    case notConnected
    /// The connection ended while the operation was in progress.
    case disconnected(DisconnectReason)
    /// The operation did not complete in time.
    case timeout
    /// No such peripheral, service or characteristic.
    case notFound
    /// The characteristic does not have the property the operation needs.
    case notSupported
    /// The peripheral answered with an ATT error.
    case attribute(ATTError)
    /// The value does not fit in one ATT packet (ATT_MTU − 3 bytes).
    case valueTooLong
    /// A notification or indication with no subscribed central.
    case noSubscribers
    /// An argument is invalid (a bad MTU, an address in use, an advertisement that does not fit).
    case invalidArgument
    /// The waiting task was cancelled.
    case cancelled
    /// The transport failed (e.g. a D-Bus error); the message says how.
    case failed
  }

  /// What kind of failure.
  public var code: Code
  /// What happened, for people.
  public var message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  /// The ATT error, when the peripheral answered with one.
  public var attributeError: ATTError? {
    if case .attribute(let error) = code { error } else { nil }
  }

  public var description: String { message }
}
