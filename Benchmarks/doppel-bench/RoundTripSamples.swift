import Foundation

/// Latencies of the round trips of one workload and the time they took, and
/// the figures printed from them (the peers in Benchmarks/peers compute the
/// same figures the same way).
struct RoundTripSamples {
  /// One latency per round trip, in nanoseconds.
  var latencies: [UInt64] = []
  /// From the first round trip's start to the last one's end, in nanoseconds.
  var elapsed: UInt64 = 0

  /// Round trips per second over the whole run.
  var perSecond: Double { elapsed == 0 ? 0 : Double(latencies.count) * 1e9 / Double(elapsed) }

  /// The nearest-rank percentile `p` (0...1) of the latencies, in microseconds.
  func percentile(_ p: Double) -> Double {
    guard !latencies.isEmpty else { return .nan }
    let sorted = latencies.sorted()
    let rank = max(1, Int((Double(sorted.count) * p).rounded(.up)))
    return Double(sorted[min(sorted.count, rank) - 1]) / 1000
  }

  /// Prints `dbus.WORKLOAD.roundtrips_per_s`, `…p50_us`, `…p99_us` and `…roundtrips`.
  func report(_ workload: String) {
    print("dbus.\(workload).roundtrips_per_s \(String(format: "%.1f", perSecond))")
    print("dbus.\(workload).p50_us \(String(format: "%.1f", percentile(0.50)))")
    print("dbus.\(workload).p99_us \(String(format: "%.1f", percentile(0.99)))")
    print("dbus.\(workload).roundtrips \(latencies.count)")
  }
}
