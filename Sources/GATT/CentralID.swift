/// A central as a peripheral sees it. Over BlueZ this is the central's device
/// address (`00:AA:01:01:00:01`); the loopback makes up addresses of the same shape.
public struct CentralID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
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

  public static func < (lhs: CentralID, rhs: CentralID) -> Bool { lhs.rawValue < rhs.rawValue }

  public var description: String { rawValue }
}
