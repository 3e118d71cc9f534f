/// A validated D-Bus object path, e.g. `/org/bluez/hci0`.
public struct ObjectPath: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The path text.
  public let rawValue: String

  /// Validates `rawValue` as an object path.
  public init(_ rawValue: String) throws(DBusError) {
    try DBusName.validatePath(rawValue)
    self.rawValue = rawValue
  }

  private init(unchecked: String) { self.rawValue = unchecked }

  /// The root path `/`.
  public static let root = ObjectPath(unchecked: "/")

  public var description: String { rawValue }

  public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

  /// This path with one more element, e.g. `/app` + `service0`.
  public func appending(_ element: String) throws(DBusError) -> ObjectPath {
    try ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
  }

  /// Whether `self` lies strictly below `ancestor`.
  public func isDescendant(of ancestor: ObjectPath) -> Bool {
    if ancestor.rawValue == "/" { return rawValue != "/" }
    return rawValue.hasPrefix(ancestor.rawValue + "/")
  }

  /// The last element, or `""` for the root.
  public var lastElement: Substring {
    rawValue.split(separator: "/").last ?? ""
  }
}
