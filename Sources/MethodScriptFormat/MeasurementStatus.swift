/// The status bitmask a measured value carries as metadata (`1X`, one hex digit).
public struct MeasurementStatus: OptionSet, Hashable, Sendable, CustomStringConvertible {
  public let rawValue: UInt8

  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// The point was not taken at its intended time.
  public static let timingError = MeasurementStatus(rawValue: 0x1)
  /// The value exceeded the current range (the reading is clipped).
  public static let overload = MeasurementStatus(rawValue: 0x2)
  /// The value is too small for the current range to resolve well.
  public static let underload = MeasurementStatus(rawValue: 0x4)
  /// The value is close to the end of the current range.
  public static let overloadWarning = MeasurementStatus(rawValue: 0x8)

  /// No flag set.
  public static let ok: MeasurementStatus = []

  public var description: String {
    if isEmpty { return "OK" }
    let names: [(MeasurementStatus, String)] = [
      (.timingError, "timing error"), (.overload, "overload"), (.underload, "underload"),
      (.overloadWarning, "overload warning"),
    ]
    return names.filter { contains($0.0) }.map(\.1).joined(separator: " | ")
  }
}
