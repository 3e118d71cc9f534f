/// Heart rate and rhythm from ECG samples, as the Kardia server reported
/// them: R peaks found as local maxima above an adaptive threshold, the heart
/// rate from the median RR interval, and the rhythm called irregular when RR
/// intervals vary by more than 10 % (coefficient of variation).
public struct HeartRateAnalysis: Hashable, Sendable {
  /// The rhythm, as the status code the app looks up.
  public enum Status: Int, Hashable, Sendable, Codable {
    /// Fewer than three R peaks so far.
    case insufficientData = 0
    case normal = 1
    case arrhythmia = 2
  }

  /// Times of the R peaks found, in seconds.
  public let rPeaks: [Double]
  /// Beats per minute from the median RR interval; `nil` with fewer than two peaks.
  public let heartRate: Double?
  public let status: Status

  /// Analyses `samples` (seconds, mV) taken at roughly regular intervals.
  public init(times: [Double], amplitudes: [Double]) {
    precondition(times.count == amplitudes.count, "one time per amplitude")
    var peaks: [Double] = []
    var lastPeak = -Double.infinity
    var span = ThresholdSpan()
    for i in amplitudes.indices {
      span.add(i, amplitude: amplitudes[i]) { times[$1] - times[$0] }
      guard i > 0, i + 1 < amplitudes.count, Self.warmedUp(times[i] - times[0]) else { continue }
      if Self.isRPeak(
        amplitudes[i], before: amplitudes[i - 1], after: amplitudes[i + 1], strongest: span.strongest,
        sinceLastPeak: times[i] - lastPeak)
      {
        peaks.append(times[i])
        lastPeak = times[i]
      }
    }
    self.init(rPeaks: peaks)
  }

  /// The heart rate and rhythm of R peaks found already (seconds, in order).
  public init(rPeaks: [Double]) {
    self.rPeaks = rPeaks
    let rr = zip(rPeaks.dropFirst(), rPeaks).map { $0 - $1 }
    guard !rr.isEmpty else {
      heartRate = nil
      status = .insufficientData
      return
    }
    let sorted = rr.sorted()
    let median =
      sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    heartRate = 60 / median
    guard rr.count >= 2 else {
      status = .insufficientData
      return
    }
    let mean = rr.reduce(0, +) / Double(rr.count)
    let deviation = (rr.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(rr.count)).squareRoot()
    status = deviation / mean > 0.1 ? .arrhythmia : .normal
  }

  // The detector's rules, shared with StreamingHeartRateAnalysis. Each
  // bound allows a nanosecond, so that samples at a regular rate meet it
  // alike wherever their times are counted from (0.54 - 0.29 is not 0.25 in
  // binary floating point).
  static let tolerance = 1e-9

  /// Whether a sample `seconds` older than the current one has left the span
  /// the threshold is taken from (the last 2 s).
  static func leftThresholdSpan(_ seconds: Double) -> Bool { seconds > 2 + tolerance }

  /// Whether the detector has seen enough signal, `seconds` since its first
  /// sample, to tell an R wave from a T wave by its threshold (1 s).
  static func warmedUp(_ seconds: Double) -> Bool { seconds >= 1 - tolerance }

  /// Whether a sample `seconds` after the last R peak may be the next one
  /// (more than 250 ms: a T wave is not a beat).
  static func pastRefractory(_ seconds: Double) -> Bool { seconds > 0.25 + tolerance }

  /// Whether a sample is an R peak: at least 60 % of the strongest sample of
  /// the last 2 s, a local maximum, and past the last peak's refractory period.
  static func isRPeak(
    _ value: Double, before: Double, after: Double, strongest: Double, sinceLastPeak: Double
  ) -> Bool {
    value >= 0.6 * strongest && value > before && value >= after && pastRefractory(sinceLastPeak)
  }
}
