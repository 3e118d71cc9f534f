import BlendMicroClient
import GATT

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The last `length` seconds of one connection's samples, and their analysis.
struct ECGWindow {
  /// A sample earlier than the latest one: refused, as the analysis needs times in order.
  struct OutOfOrder: Error {
    var latest: Date
  }

  /// How much of the stream is analysed, in seconds.
  let length: Double
  /// The time of the connection's first sample; times are kept in seconds from it.
  private var origin: Date?
  private var times: [Double] = []
  private var amplitudes: [Double] = []
  /// Index of the first sample inside the window (older ones are dropped in batches).
  private var first = 0

  init(length: Duration) {
    self.length = length.seconds
  }

  /// The time of the latest sample.
  var latest: Date? {
    guard let origin, let last = times.last else { return nil }
    return origin.addingTimeInterval(last)
  }

  /// How many samples the window holds.
  var count: Int { times.count - first }

  /// Adds a sample, dropping those older than `length` before it.
  mutating func append(amplitude: Double, at time: Date) throws(OutOfOrder) {
    let origin = self.origin ?? time
    self.origin = origin
    let seconds = time.timeIntervalSince(origin)
    if let last = times.last, seconds < last, let latest {
      throw OutOfOrder(latest: latest)
    }
    times.append(seconds)
    amplitudes.append(amplitude)
    while seconds - times[first] > length { first += 1 }
    if first > 4096, first * 2 > times.count {
      times.removeFirst(first)
      amplitudes.removeFirst(first)
      first = 0
    }
  }

  /// `HeartRateAnalysis` of the window, started on a beat.
  ///
  /// The detector's threshold is 60 % of the last two seconds' maximum, so on a
  /// window that opens mid-beat it would take a T wave before the first R peak
  /// for a beat, and an irregular rhythm would follow. The window is therefore
  /// analysed from just before the strongest sample of its first two seconds
  /// (an R peak, at any rate above 30 bpm).
  func analysis() -> HeartRateAnalysis {
    guard first < times.count else { return HeartRateAnalysis(times: [], amplitudes: []) }
    var strongest = first
    var index = first
    while index < times.count, times[index] - times[first] <= 2 {
      if amplitudes[index] > amplitudes[strongest] { strongest = index }
      index += 1
    }
    let start = max(first, strongest - 1)
    return HeartRateAnalysis(times: Array(times[start...]), amplitudes: Array(amplitudes[start...]))
  }
}
