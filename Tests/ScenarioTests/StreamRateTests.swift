import Scenario
import Signals
import Testing

/// A stream's rate: the least-squares slope of its samples' times, which a
/// loaded machine's late first or last samples move little and a slow device
/// moves all the same.
struct StreamRateTests {
  /// Arrival times of `count` samples sent at `rate`, each shifted by `delay(n)`.
  private func statistics(count: Int, rate: Double, delay: (Int) -> Double = { _ in 0 }) -> StreamStatistics {
    var statistics = StreamStatistics()
    for n in 0..<count { statistics.add(0, at: 3 + Double(n) / rate + delay(n)) }
    return statistics
  }

  @Test func evenlySpacedSamplesGiveTheirRate() throws {
    let rate = try #require(statistics(count: 1200, rate: 100).rate)
    #expect(abs(rate - 100) < 1e-9)
  }

  /// CI's Blend Micro run over D-Bus signals on a loaded machine: all 1,200
  /// samples of 12 s at 100 Hz arrived, the last 0.6 s of them held up and
  /// drained together 12.63 s after the first. First and last alone make it
  /// 94.99/s.
  @Test func aBacklogDrainedAtTheEndMovesTheRateLittle() throws {
    let backlog = statistics(count: 1200, rate: 100) { n in
      n < 1140 ? 0 : 12.62 + Double(n - 1140) * 0.0001 - Double(n) / 100
    }
    let first = try #require(backlog.firstTime)
    let last = try #require(backlog.lastTime)
    #expect(Double(backlog.count - 1) / (last - first) < 95)
    let rate = try #require(backlog.rate)
    #expect(rate > 97 && rate < 100)
  }

  /// The first sample, then a 0.5 s stall before the rest (on schedule after it).
  @Test func aStallAfterTheFirstSampleMovesTheRateLittle() throws {
    let rate = try #require(statistics(count: 1000, rate: 64) { n in n == 0 ? -0.5 : 0 }.rate)
    #expect(abs(rate - 64) < 0.1)
  }

  /// A device that really sends slower is judged slower, jitter or not.
  @Test func aSlowDeviceIsStillSlow() throws {
    var generator = SplitMix64(seed: 1)
    let rate = try #require(
      statistics(count: 2000, rate: 90) { _ in Double(generator.next() % 20) / 1000 }.rate)
    #expect(abs(rate - 90) < 0.5)
  }

  @Test func aDayOfSamplesKeepsItsPrecision() throws {
    let rate = try #require(statistics(count: 8_640_000, rate: 100).rate)
    #expect(abs(rate - 100) < 1e-6)
  }

  @Test func twoSamplesGiveTheirSpan() throws {
    var statistics = StreamStatistics()
    statistics.add(0, at: 1)
    #expect(statistics.rate == nil)
    statistics.add(0, at: 1.25)
    #expect(statistics.rate == 4)
  }

  @Test func samplesAllAtOneTimeHaveNoRate() {
    var statistics = StreamStatistics()
    for _ in 0..<10 { statistics.add(0, at: 2) }
    #expect(statistics.rate == nil)
  }
}
