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
    let refractory = 0.25
    var lastPeak = -Double.infinity
    // The maximum of the last 2 s, kept as a queue of indices whose values
    // decrease (each sample enters and leaves once: linear time).
    var maxima: [Int] = []
    var head = 0
    for i in amplitudes.indices {
      while maxima.count > head, amplitudes[maxima[maxima.count - 1]] <= amplitudes[i] { maxima.removeLast() }
      maxima.append(i)
      while times[i] - times[maxima[head]] > 2 { head += 1 }
      // The adaptive threshold needs a second of signal before it can tell an R wave from a T wave.
      guard i > 0, i + 1 < amplitudes.count, times[i] - times[0] >= 1 else { continue }
      let value = amplitudes[i]
      let threshold = 0.6 * amplitudes[maxima[head]]
      if value >= threshold, value > amplitudes[i - 1], value >= amplitudes[i + 1], times[i] - lastPeak > refractory {
        peaks.append(times[i])
        lastPeak = times[i]
      }
    }
    rPeaks = peaks
    let rr = zip(peaks.dropFirst(), peaks).map { $0 - $1 }
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
}
