/// A validated D-Bus signature: zero or more complete types.
public struct DBusSignature: Hashable, Sendable, CustomStringConvertible {
  /// The signature text, e.g. `a{sv}`.
  public let rawValue: String
  /// The complete types it holds.
  public let types: [DBusType]

  /// Validates `rawValue` as a signature.
  public init(_ rawValue: String) throws(DBusError) {
    self.types = try DBusType.parse(rawValue)
    self.rawValue = rawValue
  }

  /// The signature of these types.
  public init(_ types: [DBusType]) {
    self.types = types
    self.rawValue = types.map(\.signature).joined()
  }

  public var description: String { rawValue }
}
