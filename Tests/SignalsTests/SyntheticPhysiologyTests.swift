import Signals
import Testing

@Suite struct SyntheticPhysiologyTests {
  @Test func ppgPeaksAreAtTheBeatTimesAndFollowTheHeartRate() throws {
    var ppg = SyntheticPPG(heartRate: 75, variability: 0.05, amplitude: 50, seed: 4)
    let samples = (0..<(64 * 60)).map { ppg.value(at: Double($0) / 64)! }
    let peaks = ppg.peakTimes(until: 59.5).filter { $0 > 0.5 }
    // Each beat time is the largest sample within ±0.3 s (to a sample).
    for peak in peaks {
      let centre = Int((peak * 64).rounded())
      let window = (centre - 19)...(centre + 19)
      let highest = window.max { samples[$0] < samples[$1] }!
      #expect(abs(highest - centre) <= 1, "peak at \(peak) s, highest sample at \(Double(highest) / 64) s")
    }
    let intervals = zip(peaks.dropFirst(), peaks).map { $0 - $1 }
    let rate = 60 / (intervals.reduce(0, +) / Double(intervals.count))
    #expect(abs(rate - 75) < 1.5)
    #expect(intervals.allSatisfy { abs($0 - 0.8) <= 0.8 * 0.05 + 1e-9 })
    #expect(Set(intervals.map { ($0 * 1000).rounded() }).count > 10, "intervals vary")
    // Centred on zero.
    let mean = samples.reduce(0, +) / Double(samples.count)
    #expect(abs(mean) < 2)
  }

  @Test func ppgIsDeterministicBySeed() {
    var a = SyntheticPPG(noise: 1, seed: 9)
    var b = SyntheticPPG(noise: 1, seed: 9)
    var c = SyntheticPPG(noise: 1, seed: 10)
    let times = (0..<640).map { Double($0) / 64 }
    let va = times.map { a.value(at: $0)! }
    #expect(va == times.map { b.value(at: $0)! })
    #expect(va != times.map { c.value(at: $0)! })
  }

  @Test func edaHasItsTonicLevelAndResponsesAtTheirTimes() throws {
    var eda = SyntheticEDA(
      tonicLevel: 3, tonicDrift: 0.6, responses: [SkinConductanceResponse(onset: 10, amplitude: 0.5)], noise: 0)
    let early = eda.value(at: 5)
    #expect(abs(try #require(early) - 3.05) < 1e-9)
    let response = SkinConductanceResponse(onset: 10, amplitude: 0.5)
    let peak = 10 + response.timeToPeak
    let peakValue = eda.value(at: peak)
    let atPeak = try #require(peakValue)
    #expect(abs(atPeak - (3 + 0.6 * peak / 60 + 0.5)) < 1e-9)
    let laterValue = eda.value(at: 40)
    let later = try #require(laterValue)
    #expect(later - (3 + 0.6 * 40 / 60) < 0.05, "the response has decayed")
  }

  @Test func spontaneousResponsesAreSeededAndAtTheirRate() {
    let eda = SyntheticEDA(spontaneousRate: 3, noise: 0, seed: 5)
    let responses = eda.spontaneousResponses(until: 600)
    #expect((20...40).contains(responses.count), "\(responses.count) in 10 minutes at 3/min")
    #expect(responses == SyntheticEDA(spontaneousRate: 3, noise: 0, seed: 5).spontaneousResponses(until: 600))
    #expect(responses != SyntheticEDA(spontaneousRate: 3, noise: 0, seed: 6).spontaneousResponses(until: 600))
    // The signal rises at each response.
    var signal = eda
    for response in responses.prefix(5) {
      let before = signal.value(at: response.onset)!
      let after = signal.value(at: response.onset + response.timeToPeak)!
      #expect(after > before)
    }
  }

  @Test func temperatureDriftsSlowlyWithNoise() {
    let drift = TemperatureDrift(start: 32, trendPerHour: 1, wander: 0.2, noise: 0.01, seed: 3)
    #expect(abs(drift.trend(at: 0) - 32) < 1e-9)
    #expect(abs(drift.trend(at: 3600) - 33) <= 0.2 * 2)
    let values = (0..<240).map { drift.value(at: Double($0) / 4)! }
    let steps = zip(values.dropFirst(), values).map { abs($0 - $1) }
    #expect(steps.max()! < 0.1, "no jumps between samples")
    #expect(Set(values).count > 200, "noisy")
    let again = TemperatureDrift(start: 32, trendPerHour: 1, wander: 0.2, noise: 0.01, seed: 3)
    #expect(values == (0..<240).map { again.value(at: Double($0) / 4)! })
  }
}
