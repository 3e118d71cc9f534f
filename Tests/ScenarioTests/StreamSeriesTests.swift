import Scenario
import Testing

/// The series a stream keeps for plots: every k-th sample, k doubling as the
/// run goes on, never more than its capacity.
struct StreamSeriesTests {
  @Test func aLongStreamIsThinnedEvenly() {
    var statistics = StreamStatistics()
    let count = 10_000
    for n in 0..<count { statistics.add(Double(n), at: Double(n) / 100) }
    let series = statistics.series
    #expect(series.count <= StreamStatistics.seriesCapacity)
    #expect(series.count > StreamStatistics.seriesCapacity / 4)
    #expect(series.first?.value == 0)
    // Evenly spaced: every point `stride` samples after the one before.
    let steps = Set(zip(series, series.dropFirst()).map { $1.value - $0.value })
    #expect(steps == [Double(statistics.seriesStride)])
    #expect(statistics.count == count)
  }

  @Test func aShortStreamKeepsEverySample() {
    var statistics = StreamStatistics()
    for n in 0..<100 { statistics.add(Double(n), at: Double(n)) }
    #expect(statistics.series.map(\.value) == (0..<100).map(Double.init))
    #expect(statistics.seriesStride == 1)
  }
}
