import BlendMicroClient
import Signals
import Testing

/// The streaming detector against the window analysis it replaces: every
/// second, the analysis of the last seconds must be the one
/// `HeartRateAnalysis(times:amplitudes:)` gives for the same samples.
struct StreamingHeartRateAnalysisTests {
  /// Feeds `samples` at `rate` and compares, after every `every` samples, the
  /// analysis of the last `window` samples with the one computed from scratch.
  /// Returns how many analyses found a heart rate (so that a test can show
  /// it compared something).
  @discardableResult
  func expectSameAnalyses(_ samples: [Double], rate: Double, window: Int, every: Int = 100) -> Int {
    var stream = StreamingHeartRateAnalysis(sampleRate: rate, capacity: window)
    var rated = 0
    for (n, sample) in samples.enumerated() {
      stream.append(sample)
      guard (n + 1) % every == 0 else { continue }
      let recent = Array(samples[max(0, n + 1 - window)...n])
      let expected = HeartRateAnalysis(times: recent.indices.map { Double($0) / rate }, amplitudes: recent)
      let got = stream.analysis(ofLast: window)
      #expect(got == expected, "after sample \(n): \(got.rPeaks.count) peaks, expected \(expected.rPeaks.count)")
      if got != expected { break }
      if got.heartRate != nil { rated += 1 }
    }
    return rated
  }

  /// To the 4 decimals the board's text carries: equal neighbours are common.
  func quantized(_ values: [Double]) -> [Double] { values.map { ($0 * 10_000).rounded() / 10_000 } }

  @Test(arguments: [
    SyntheticECG(sampleRate: 100, heartRate: 72, noise: 0.01, seed: 1),
    SyntheticECG(sampleRate: 100, heartRate: 150, noise: 0.05, arrhythmiaEpisodes: [20...70], seed: 3),
    SyntheticECG(sampleRate: 250, heartRate: 45, noise: 0.2, arrhythmiaEpisodes: [5...30, 60...80], seed: 9),
  ])
  func tenSecondWindowsOfAnECGMatchTheWindowAnalysis(_ ecg: SyntheticECG) {
    let rate = ecg.sampleRate
    let samples = quantized(ecg.samples(0..<Int(120 * rate)))
    let rated = expectSameAnalyses(samples, rate: rate, window: Int(10 * rate), every: Int(rate))
    #expect(rated >= 110)
  }

  @Test func shortWindowsAndOddStepsMatchTheWindowAnalysis() {
    let ecg = SyntheticECG(sampleRate: 100, heartRate: 90, noise: 0.1, arrhythmiaEpisodes: [10...40], seed: 5)
    let samples = quantized(ecg.samples(0..<6_000))
    for window in [150, 250, 333, 1_000] {
      expectSameAnalyses(samples, rate: 100, window: window, every: 37)
    }
  }

  /// A beat each second and a spike exactly 250 ms after it, the refractory
  /// bound, seen from windows that start at every sample: the spike is not a
  /// beat, from any start. Without the bounds' tolerance this one fails too:
  /// counted from some starts, the 25 samples between them come to more
  /// than 0.25 s.
  @Test func spikesAtTheRefractoryBoundAreNotBeatsFromAnyStart() {
    let samples = (0..<3_000).map { (n: Int) -> Double in
      let background = Double(n % 7) / 70
      return n % 100 == 0 || n % 100 == 25 ? 1 : background
    }
    expectSameAnalyses(samples, rate: 100, window: 700, every: 1)
    var stream = StreamingHeartRateAnalysis(sampleRate: 100, capacity: 700)
    for sample in samples { stream.append(sample) }
    #expect(stream.analysis(ofLast: 700).heartRate.map { abs($0 - 60) < 1e-9 } == true)
  }

  /// Noise with no rhythm: many small peaks, the threshold jumping around.
  /// Without the bounds' tolerance this one fails: a time difference counted
  /// from the window's first sample (0.54 - 0.29) and the same one counted
  /// in samples (25 / 100) fall on either side of the refractory bound.
  @Test func noiseMatchesTheWindowAnalysis() {
    var random = SplitMix64(seed: 11)
    let samples = quantized((0..<8_000).map { _ in Double.random(in: -1...1, using: &random) })
    expectSameAnalyses(samples, rate: 100, window: 1_000, every: 100)
  }

  /// Under 0.5 Hz a sample is more than 2 s long: the sample before the
  /// window leaves the threshold span at the window's first, which the
  /// stream's detector may have taken for a peak and the window's cannot.
  @Test func aSlowStreamMatchesTheWindowAnalysis() {
    expectSameAnalyses([0, 1, 0, 1, 0], rate: 0.4, window: 4, every: 1)
    var random = SplitMix64(seed: 3)
    let samples = (0..<400).map { _ in Double(Int.random(in: 0...3, using: &random)) }
    for rate in [0.3, 0.45, 0.5, 2.5] {
      expectSameAnalyses(samples, rate: rate, window: 7, every: 1)
    }
  }

  @Test func aStreamShorterThanTheWindowIsAnalysedWhole() {
    let ecg = SyntheticECG(sampleRate: 100, heartRate: 60, noise: 0.01, seed: 2)
    var stream = StreamingHeartRateAnalysis(sampleRate: 100, capacity: 1_000)
    let samples = ecg.samples(0..<450)
    for sample in samples { stream.append(sample) }
    let expected = HeartRateAnalysis(times: samples.indices.map { Double($0) / 100 }, amplitudes: samples)
    #expect(stream.analysis(ofLast: 1_000) == expected)
    #expect(stream.count == 450)
    #expect(expected.heartRate.map { abs($0 - 60) < 3 } == true)
  }
}
