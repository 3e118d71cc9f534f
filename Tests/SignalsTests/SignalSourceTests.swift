import Signals
import Testing

@Suite struct SignalSourceTests {
  @Test func rampMovesLinearlyThenHolds() {
    let ramp = RampSignal(from: 10, to: 20, duration: 5)
    #expect(ramp.value(at: 0) == 10)
    #expect(ramp.value(at: 2.5) == 15)
    #expect(ramp.value(at: 5) == 20)
    #expect(ramp.value(at: 60) == 20)
  }

  @Test func sineHasItsAmplitudeFrequencyAndOffset() throws {
    let sine = SineSignal(amplitude: 2, frequency: 1, offset: 5)
    #expect(abs(try #require(sine.value(at: 0.25)) - 7) < 1e-9)
    #expect(abs(try #require(sine.value(at: 0.75)) - 3) < 1e-9)
  }

  @Test func noiseIsReproducibleAndHasItsSpread() {
    let a = NoiseSignal(mean: 1, standardDeviation: 0.5, seed: 7)
    let b = NoiseSignal(mean: 1, standardDeviation: 0.5, seed: 7)
    let c = NoiseSignal(mean: 1, standardDeviation: 0.5, seed: 8)
    let times = (0..<20_000).map { Double($0) / 100 }
    let va = times.map { a.value(at: $0)! }
    let vb = times.map { b.value(at: $0)! }
    let vc = times.map { c.value(at: $0)! }
    #expect(va == vb)
    #expect(va != vc)
    let mean = va.reduce(0, +) / Double(va.count)
    let sd = (va.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(va.count)).squareRoot()
    #expect(abs(mean - 1) < 0.02)
    #expect(abs(sd - 0.5) < 0.02)
  }

  @Test func recordingHoldsInterpolatesAndEnds() {
    var held = RecordedSignal(values: [1, 2, 3], sampleRate: 2)
    #expect(held.value(at: 0) == 1)
    #expect(held.value(at: 0.7) == 2)
    #expect(held.value(at: 1.4) == 3)
    #expect(held.value(at: 1.5) == nil)
    var linear = RecordedSignal(times: [0, 1], values: [0, 10], interpolation: .linear)
    #expect(linear.value(at: 0.25) == 2.5)
    var looping = RecordedSignal(values: [1, 2], sampleRate: 1, loops: true)
    #expect(looping.value(at: 2.5) == 1)
    #expect(looping.value(at: 3.5) == 2)
  }

  @Test func sumEndsWithItsShortestTerm() {
    var sum = SignalSum([ConstantSignal(1), RecordedSignal(values: [1, 2], sampleRate: 1)])
    #expect(sum.value(at: 0) == 2)
    #expect(sum.value(at: 1) == 3)
    #expect(sum.value(at: 2) == nil)
  }
}
