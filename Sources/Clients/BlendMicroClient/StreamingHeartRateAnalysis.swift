/// ``HeartRateAnalysis`` of the latest seconds of an ECG sampled at a regular
/// rate, kept up to date sample by sample.
///
/// Analysing a 10 s window once a second from scratch examines every sample
/// ten times. This detector examines each sample once as it arrives, over the
/// whole stream, and an analysis of the last `n` samples scans on its own
/// only until its detector is in the stream's state (the same threshold
/// span, the same last peak or both past the refractory period; usually
/// after 2 s), and takes the stream's peaks from there.
///
/// ``analysis(ofLast:)`` equals `HeartRateAnalysis(times:amplitudes:)` of the
/// same samples with times `k / sampleRate` counted from the window's first,
/// for rates whose sample times fall on the detector's bounds exactly or
/// more than a nanosecond from them (any whole number of samples a second).
public struct StreamingHeartRateAnalysis: Sendable {
  /// Samples per second.
  public let sampleRate: Double
  /// How many of the latest samples are kept: the longest window an analysis may ask for.
  public let capacity: Int

  /// How many samples are kept at least: the capacity, and the two a
  /// sample's examination needs.
  private let kept: Int
  /// The samples kept; `amplitudes[k]` is sample `dropped + k` of the stream.
  private var amplitudes: [Double] = []
  private var dropped = 0
  /// The stream's detector: its threshold span, the R peaks found (sample
  /// numbers, the older ones dropped with their samples) and the last one.
  private var span = ThresholdSpan()
  private var peaks: [Int] = []
  private var lastPeak: Int?

  /// A detector for samples at `sampleRate` per second that keeps the last `capacity`.
  public init(sampleRate: Double, capacity: Int) {
    precondition(sampleRate > 0 && capacity > 0, "a positive rate and capacity")
    self.sampleRate = sampleRate
    self.capacity = capacity
    kept = max(capacity, 2)
  }

  /// How many samples the stream has had.
  public var count: Int { dropped + amplitudes.count }

  /// Adds the next sample. The one before it, now with a sample on either
  /// side, is examined for an R peak.
  public mutating func append(_ amplitude: Double) {
    let n = count
    amplitudes.append(amplitude)
    if n >= 1 { examine(n - 1) }
    let rate = sampleRate
    span.add(n, amplitude: amplitude) { Self.seconds($1 - $0, at: rate) }
    if amplitudes.count > kept * 2 {
      let excess = amplitudes.count - kept
      amplitudes.removeFirst(excess)
      dropped += excess
      peaks.removeFirst(peaks.prefix { $0 < dropped }.count)
    }
  }

  /// The analysis of the last `length` samples (all of them while fewer have come).
  public func analysis(ofLast length: Int) -> HeartRateAnalysis {
    precondition(length > 0 && length <= capacity, "a window of 1...\(capacity) samples")
    let end = count
    let start = max(dropped, end - length)
    var found: [Int] = []
    // The window's own detector, from its first sample.
    var span = ThresholdSpan()
    var lastPeak: Int?
    var i = start
    while i < end {
      span.add(i, amplitude: self[i]) { Self.seconds($1 - $0, at: sampleRate) }
      // Once the sample before the window has left the threshold span, the
      // span is the stream's; once the last peaks agree too, the stream's
      // peaks are the window's. (Never at the window's first sample, which
      // the window cannot take for a peak and the stream can, at rates
      // under 0.5 Hz.)
      if i + 1 < end, start == 0 || (i > start && HeartRateAnalysis.leftThresholdSpan(seconds(i - start + 1))),
        agree(lastPeak, streamLastPeak(before: i), at: i)
      {
        found += peaks[firstPeak(from: i)...]
        break
      }
      if i > start, i + 1 < end, HeartRateAnalysis.warmedUp(seconds(i - start)),
        HeartRateAnalysis.isRPeak(
          self[i], before: self[i - 1], after: self[i + 1], strongest: span.strongest,
          sinceLastPeak: lastPeak.map { seconds(i - $0) } ?? .infinity)
      {
        found.append(i)
        lastPeak = i
      }
      i += 1
    }
    return HeartRateAnalysis(rPeaks: found.map { seconds($0 - start) })
  }

  /// Sample `n` of the stream (one still kept).
  private subscript(n: Int) -> Double { amplitudes[n - dropped] }

  /// `samples` samples in seconds, as the window analysis counts time.
  private func seconds(_ samples: Int) -> Double { Self.seconds(samples, at: sampleRate) }

  private static func seconds(_ samples: Int, at rate: Double) -> Double { Double(samples) / rate }

  /// The stream's detector's decision for sample `i`, which has a sample on either side.
  private mutating func examine(_ i: Int) {
    guard i > 0, HeartRateAnalysis.warmedUp(seconds(i)) else { return }
    let isPeak = HeartRateAnalysis.isRPeak(
      self[i], before: self[i - 1], after: self[i + 1], strongest: span.strongest,
      sinceLastPeak: lastPeak.map { seconds(i - $0) } ?? .infinity)
    guard isPeak else { return }
    peaks.append(i)
    lastPeak = i
  }

  /// The stream's last peak before sample `i`.
  private func streamLastPeak(before i: Int) -> Int? {
    let index = firstPeak(from: i)
    return index > 0 ? peaks[index - 1] : nil
  }

  /// The index in `peaks` of the first peak at or after sample `i`.
  private func firstPeak(from i: Int) -> Int {
    var low = 0
    var high = peaks.count
    while low < high {
      let middle = (low + high) / 2
      if peaks[middle] < i { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Whether two detectors whose last peaks were `a` and `b` decide alike
  /// from sample `i` on: the same peak, or both past the refractory period.
  private func agree(_ a: Int?, _ b: Int?, at i: Int) -> Bool {
    if a == b { return true }
    func past(_ peak: Int?) -> Bool { peak.map { HeartRateAnalysis.pastRefractory(seconds(i - $0)) } ?? true }
    return past(a) && past(b)
  }
}
