/// A peripheral as a central sees it: what `scan` reports and `connect` takes.
/// Over BlueZ this is the device address; the loopback makes up addresses of the same shape.
public struct PeripheralID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
  ExpressibleByStringLiteral
{
  /// The transport's identifier, usually a Bluetooth device address.
  public var rawValue: String

  public init(_ rawValue: String) {
    self.rawValue = rawValue
  }

  public init(stringLiteral value: String) {
    self.init(value)
  }

  public static func < (lhs: PeripheralID, rhs: PeripheralID) -> Bool {
    lhs.rawValue < rhs.rawValue
  }

  public var description: String { rawValue }
}
