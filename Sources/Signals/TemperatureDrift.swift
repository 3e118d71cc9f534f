#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A slowly drifting temperature (e.g. skin temperature, °C): a start value,
/// a linear trend, a smooth seeded wander (three slow sinusoids with periods
/// of minutes), and seeded Gaussian noise.
///
/// Deterministic and stateless: the value at a time depends only on the
/// configuration and the time.
public struct TemperatureDrift: SignalSource, Hashable {
  /// The value at time zero, before wander and noise.
  public var start: Double
  /// Linear trend, in degrees per hour.
  public var trendPerHour: Double
  /// Peak size of the slow wander, in degrees.
  public var wander: Double
  /// Standard deviation of additive Gaussian noise, in degrees.
  public var noise: Double
  public var seed: UInt64

  /// Periods (seconds) of the wander's components.
  private static let periods = [311.0, 617.0, 1301.0]

  public init(
    start: Double = 33, trendPerHour: Double = 0.3, wander: Double = 0.1, noise: Double = 0.01, seed: UInt64 = 1
  ) {
    self.start = start
    self.trendPerHour = trendPerHour
    self.wander = max(0, wander)
    self.noise = max(0, noise)
    self.seed = seed
  }

  /// The value without noise at `time` seconds.
  public func trend(at time: Double) -> Double {
    var value = start + trendPerHour * time / 3600
    for (k, period) in Self.periods.enumerated() {
      let phase = 2 * Double.pi * SplitMix64.unit(seed: seed &+ 0x7E3, index: UInt64(k))
      // Each component starts at zero, so the drift begins at `start`.
      value += wander / 3 * (sin(2 * Double.pi * time / period + phase) - sin(phase))
    }
    return value
  }

  public func value(at time: Double) -> Double? {
    var value = trend(at: time)
    if noise > 0 {
      let key = UInt64(bitPattern: Int64((time * 1_000_000).rounded()))
      value += noise * SplitMix64.gaussian(seed: seed &+ 0x7E4, index: key)
    }
    return value
  }
}
