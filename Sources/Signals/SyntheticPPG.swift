#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A synthetic blood volume pulse (photoplethysmogram) as a wrist sensor's
/// filtered output shows it: one pulse per heartbeat, each a sharp systolic
/// wave followed by a smaller diastolic wave, centred on zero, with seeded
/// beat-to-beat variability and optional noise.
///
/// Deterministic: the same configuration gives the same beats and samples.
/// `beats(until:)` exposes the systolic peak times, so a test can check
/// interbeat intervals computed from the signal.
public struct SyntheticPPG: SignalSource, Hashable {
  /// One heartbeat: when its pulse starts, where its systolic peak is, and
  /// the interval to the next beat (all in seconds).
  public struct Beat: Hashable, Sendable {
    public var onset: Double
    public var interval: Double
    /// The systolic peak: the pulse's maximum.
    public var peak: Double { onset + SyntheticPPG.systolicDelay }
  }

  /// Mean heart rate in beats per minute.
  public var heartRate: Double
  /// Beat-to-beat variability: each interval is the mean interval times
  /// `1 + variability · u`, u uniform in −1…1 (seeded).
  public var variability: Double
  /// Height of the systolic wave above the pulse's foot, in BVP units.
  public var amplitude: Double
  /// Standard deviation of additive Gaussian noise, in BVP units.
  public var noise: Double
  public var seed: UInt64

  /// The beats generated so far that can still shape upcoming samples.
  private var window: [Beat] = []
  private var nextIndex: UInt64 = 0
  private var nextOnset = 0.0

  /// Seconds from a pulse's onset to its systolic peak.
  public static let systolicDelay = 0.15
  private static let systolicWidth = 0.055
  private static let diastolicDelay = 0.43
  private static let diastolicWidth = 0.09
  private static let diastolicRatio = 0.4

  /// - Parameters:
  ///   - heartRate: beats per minute (clamped to 20…240).
  ///   - variability: 0…0.5 of the mean interval.
  ///   - amplitude: systolic height in BVP units.
  ///   - noise: Gaussian noise standard deviation in BVP units.
  ///   - seed: seeds the intervals and the noise.
  public init(
    heartRate: Double = 70, variability: Double = 0.03, amplitude: Double = 60, noise: Double = 0, seed: UInt64 = 1
  ) {
    self.heartRate = min(240, max(20, heartRate))
    self.variability = min(0.5, max(0, variability))
    self.amplitude = amplitude
    self.noise = max(0, noise)
    self.seed = seed
  }

  /// The beats whose onset is at or before `end` seconds.
  public func beats(until end: Double) -> [Beat] {
    var beats: [Beat] = []
    var onset = 0.0
    var index: UInt64 = 0
    while onset <= end {
      let interval = interval(index)
      beats.append(Beat(onset: onset, interval: interval))
      onset += interval
      index += 1
    }
    return beats
  }

  /// The systolic peak times (seconds) at or before `end`.
  public func peakTimes(until end: Double) -> [Double] {
    beats(until: end).map(\.peak).filter { $0 <= end }
  }

  private func interval(_ index: UInt64) -> Double {
    let u = SplitMix64.unit(seed: seed &+ 0x0B7E_A75E, index: index) * 2 - 1
    return 60 / heartRate * (1 + variability * u)
  }

  public mutating func value(at time: Double) -> Double? {
    let t = max(0, time)
    // Beats up to two seconds ahead; drop those that ended long before.
    while nextOnset <= t + 2 {
      let interval = interval(nextIndex)
      window.append(Beat(onset: nextOnset, interval: interval))
      nextOnset += interval
      nextIndex += 1
    }
    if let firstKept = window.firstIndex(where: { $0.onset + $0.interval + 2 > t }), firstKept > 0 {
      window.removeFirst(firstKept)
    }
    var value = 0.0
    for beat in window where beat.onset <= t + 1 && beat.onset > t - 3 {
      value += pulse(t - beat.onset, interval: beat.interval)
    }
    if noise > 0 {
      let key = UInt64(bitPattern: Int64((t * 1_000_000).rounded()))
      value += noise * SplitMix64.gaussian(seed: seed, index: key)
    }
    return value
  }

  /// One beat's pulse, `dt` seconds after its onset, less its mean over the
  /// interval so the signal is centred on zero.
  private func pulse(_ dt: Double, interval: Double) -> Double {
    let systolic = Self.gaussian(dt - Self.systolicDelay, Self.systolicWidth)
    let diastolic = Self.diastolicRatio * Self.gaussian(dt - Self.diastolicDelay, Self.diastolicWidth)
    let area = (Self.systolicWidth + Self.diastolicRatio * Self.diastolicWidth) * (2 * Double.pi).squareRoot()
    let mean = dt >= 0 && dt < interval ? area / interval : 0
    return amplitude * (systolic + diastolic - mean)
  }

  private static func gaussian(_ d: Double, _ width: Double) -> Double {
    let z = d / width
    return abs(z) > 8 ? 0 : exp(-z * z / 2)
  }
}
