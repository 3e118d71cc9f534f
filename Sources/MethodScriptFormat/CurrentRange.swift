/// An EmStat Pico current range, as the `2XX` metadata of a current value
/// carries it: an index, with bit 0x80 set for the high-speed ranges.
///
/// Indices and their full scales are PalmSens' (`mscript.py` of
/// PalmSens/MethodSCRIPT_Examples): 0–11 are the low-speed ranges 100 nA … 5 mA,
/// 128–137 the high-speed ranges 100 nA … 5 mA.
public struct CurrentRange: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The index as the device writes it (0–255).
  public let index: UInt8

  public init(index: UInt8) { self.index = index }

  /// Whether this is a high-speed range (bit 0x80).
  public var isHighSpeed: Bool { index & 0x80 != 0 }

  /// The full-scale current in A; `nil` for an index the Pico does not have.
  public var fullScale: Double? {
    let table = isHighSpeed ? Self.highSpeedFullScales : Self.lowSpeedFullScales
    let position = Int(index & 0x7F)
    return position < table.count ? table[position] : nil
  }

  /// Whether the Pico has this range.
  public var isKnown: Bool { fullScale != nil }

  /// Full scales of the low-speed ranges 0–11, in A.
  public static let lowSpeedFullScales: [Double] = [
    100e-9, 2e-6, 4e-6, 8e-6, 16e-6, 32e-6, 63e-6, 125e-6, 250e-6, 500e-6, 1e-3, 5e-3,
  ]
  /// Full scales of the high-speed ranges 128–137, in A.
  public static let highSpeedFullScales: [Double] = [
    100e-9, 1e-6, 6e-6, 13e-6, 25e-6, 50e-6, 100e-6, 200e-6, 1e-3, 5e-3,
  ]

  /// The ranges of one speed mode, smallest first.
  public static func ranges(highSpeed: Bool) -> [CurrentRange] {
    if highSpeed {
      return highSpeedFullScales.indices.map { CurrentRange(index: 0x80 | UInt8($0)) }
    }
    return lowSpeedFullScales.indices.map { CurrentRange(index: UInt8($0)) }
  }

  /// The smallest range of a speed mode whose full scale is at least `current`
  /// (in A, sign ignored); the largest when none is.
  public static func smallest(covering current: Double, highSpeed: Bool) -> CurrentRange {
    let all = ranges(highSpeed: highSpeed)
    // A relative margin absorbs rounding in values such as 590u vs 590e-6.
    return all.first { ($0.fullScale ?? 0) * (1 + 1e-9) >= abs(current) } ?? all[all.count - 1]
  }

  public static func < (lhs: CurrentRange, rhs: CurrentRange) -> Bool {
    (lhs.fullScale ?? 0, lhs.index) < (rhs.fullScale ?? 0, rhs.index)
  }

  /// E.g. `1 mA (high speed)`.
  public var description: String {
    guard let fullScale else { return "unknown range \(index)" }
    let (scaled, unit): (Double, String) =
      fullScale >= 1e-3
      ? (fullScale * 1e3, "mA") : fullScale >= 1e-6 ? (fullScale * 1e6, "uA") : (fullScale * 1e9, "nA")
    let number = scaled == scaled.rounded() ? String(Int(scaled)) : String(scaled)
    return "\(number) \(unit)" + (isHighSpeed ? " (high speed)" : "")
  }
}
