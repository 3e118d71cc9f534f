/// A recorded signal replayed: samples at known times, held (or interpolated
/// linearly) between them. It ends one sample period after its last sample.
public struct RecordedSignal: SignalSource, Hashable {
  /// How values between two recorded samples are found.
  public enum Interpolation: String, Hashable, Sendable {
    /// The latest sample at or before the time.
    case hold
    /// A straight line between the two neighbouring samples.
    case linear
  }

  /// Seconds from the start of the recording, increasing.
  public let times: [Double]
  public let values: [Double]
  public var interpolation: Interpolation
  /// When true, the recording starts again from its beginning instead of ending.
  public var loops: Bool
  private var cursor = 0

  /// A recording of `values` at `times` (seconds, non-decreasing, the same count).
  public init(times: [Double], values: [Double], interpolation: Interpolation = .hold, loops: Bool = false) {
    precondition(times.count == values.count, "one time per value")
    self.times = times
    self.values = values
    self.interpolation = interpolation
    self.loops = loops
  }

  /// A recording of `values` sampled regularly at `sampleRate` Hz from time zero.
  public init(values: [Double], sampleRate: Double, interpolation: Interpolation = .hold, loops: Bool = false) {
    precondition(sampleRate > 0, "a positive sample rate")
    self.init(
      times: values.indices.map { Double($0) / sampleRate }, values: values, interpolation: interpolation,
      loops: loops)
  }

  /// Seconds the recording covers: its last sample's time plus one typical period.
  public var duration: Double {
    guard let last = times.last else { return 0 }
    let period = times.count > 1 ? (last - times[0]) / Double(times.count - 1) : 1
    return last + period
  }

  public mutating func value(at time: Double) -> Double? {
    guard !times.isEmpty else { return nil }
    var t = time
    if loops, duration > 0 {
      t = time.truncatingRemainder(dividingBy: duration)
      if t < times[cursor] { cursor = 0 }
    } else if t >= duration {
      return nil
    }
    if t < times[cursor] { cursor = 0 }
    while cursor + 1 < times.count, times[cursor + 1] <= t { cursor += 1 }
    guard t >= times[cursor] else { return values[0] }
    guard interpolation == .linear, cursor + 1 < times.count else { return values[cursor] }
    let span = times[cursor + 1] - times[cursor]
    guard span > 0 else { return values[cursor] }
    let fraction = (t - times[cursor]) / span
    return values[cursor] + (values[cursor + 1] - values[cursor]) * fraction
  }
}
