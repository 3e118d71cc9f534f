import BlendMicro
import BlendMicroClient
import GATT
import Loopback
import Signals
import Testing

/// The Blend Micro and the Kardia-shaped client over the in-process loopback,
/// in virtual time.
@Suite(.timeLimit(.minutes(1)))
struct BlendMicroLoopbackTests {
  let clock = VirtualClock()
  let air: LoopbackAir

  init() { air = LoopbackAir(clock: clock) }

  @Test func clientReceivesExactlyTheSamplesInOrderAtTheRate() async throws {
    let ecg = SyntheticECG(sampleRate: 250, heartRate: 66, noise: 0.02, seed: 7)
    let board = BlendMicro(ecg: ecg)
    try await air.host(board)
    let client = BlendMicroClient(link: try air.makeCentral(), clock: clock)
    let found = try await client.connect(timeout: .seconds(5))
    #expect(found.name == "BlendMicro")
    let readings = try await client.readings()
    let collector = Task {
      var samples: [ECGSample] = []
      for try await reading in readings {
        guard case .sample(let sample) = reading else {
          Issue.record("unexpected \(reading)")
          continue
        }
        samples.append(sample)
        if samples.count == 2500 { break }
      }
      return samples
    }
    await clock.advance(by: .seconds(10))
    let samples = try await collector.value
    #expect(samples.count == 2500)
    // Exactly what the model computes, to the 4 decimals the text carries.
    let expected = ecg.samples(0..<2500).map { Double(SyntheticECG.text($0))! }
    #expect(samples.map(\.amplitude) == expected)
    // At the configured rate in virtual time: no sample arrives before it is
    // due (n / 250 s), and all 2500 arrive within the 10 s the clock moved.
    // (When the client reads the clock depends on scheduling; the bounds do not.)
    for (n, sample) in samples.enumerated() where sample.time < .milliseconds(4 * n) {
      Issue.record("sample \(n) arrived at \(sample.time), before it was due")
      break
    }
    #expect(samples.last!.time <= .seconds(10))
    #expect(zip(samples, samples.dropFirst()).allSatisfy { $0.time <= $1.time })
    let sent = await board.samplesSent
    #expect(sent == 2500 || sent == 2501)
  }

  @Test func sampleTextFitsTheBoardAndRoundTrips() {
    for value in [0.0, -0.0001, 1.2345, -12.5, 123456.7891] {
      let text = SyntheticECG.text(value)
      #expect(text.utf8.count <= BlendMicro.maximumPayload)
      #expect(abs(Double(text)! - value) < 0.00006)
    }
    #expect(SyntheticECG.text(-0.05) == "-0.0500")
    let expected: [(Double, String)] = [
      (0, "0.0000"), (1.2345, "1.2345"), (-12.5, "-12.5000"), (123456.7891, "123456.7891"),
      (0.00004, "0.0000"), (-0.00004, "0.0000"), (-0.00005, "-0.0001"), (9.99996, "10.0000"), (-1.00001, "-1.0000"),
    ]
    for (value, text) in expected {
      #expect(SyntheticECG.text(value) == text)
      #expect(SyntheticECG.utf8Text(value) == Array(text.utf8))
    }
  }

  @Test func malformedNotificationsAreReportedNotDropped() {
    #expect(
      BlendMicroClient.decode(Array("0.5\r\n".utf8), at: .zero)
        == .sample(ECGSample(time: .zero, amplitude: 0.5, text: "0.5\r\n")))
    #expect(
      BlendMicroClient.decode(Array("x1".utf8), at: .seconds(1))
        == .malformed(bytes: Array("x1".utf8), time: .seconds(1)))
    #expect(BlendMicroClient.decode([0xFF, 0x31], at: .zero) == .malformed(bytes: [0xFF, 0x31], time: .zero))
    #expect(BlendMicroClient.decode([], at: .zero) == .malformed(bytes: [], time: .zero))
    #expect(
      BlendMicroClient.decode(Array(" \r\n\t\0".utf8), at: .zero)
        == .malformed(bytes: Array(" \r\n\t\0".utf8), time: .zero))
  }

  /// The decoder reads plain decimals itself (no string per sample); it
  /// must give exactly what `Double(_:)` gives, and leave the rest to it.
  @Test func aDecimalReadsAsDoubleReadsIt() {
    var generator = SystemRandomNumberGenerator()
    var texts = [
      "0", "-0", "+1", ".5", "5.", "-.25", "123456789012345", "1234567890123456", "0.000000000000001",
      "99999999999999.9", "1e3", "-1.5E-2", "inf", "nan", "0x1p3", "1.2.3", "--1", "-", ".", "+", "12a",
    ]
    for _ in 0..<20_000 {
      let digits = Int.random(in: 1...17, using: &generator)
      var text = (0..<digits).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
      if Bool.random(using: &generator) {
        text.insert(".", at: text.index(text.startIndex, offsetBy: Int.random(in: 0...digits, using: &generator)))
      }
      if Bool.random(using: &generator) { text = "-" + text }
      texts.append(text)
      texts.append(SyntheticECG.text(Double.random(in: -5...5, using: &generator)))
    }
    for text in texts {
      let expected = Double(text).flatMap { $0.isFinite ? $0 : nil }
      let decoded = BlendMicroClient.decode(Array(text.utf8), at: .zero)
      if let expected {
        #expect(decoded == .sample(ECGSample(time: .zero, amplitude: expected, text: text)), "\(text)")
        if case .sample(let sample) = decoded { #expect(sample.amplitude.sign == expected.sign, "\(text)") }
      } else {
        #expect(decoded == .malformed(bytes: Array(text.utf8), time: .zero), "\(text)")
      }
    }
  }

  @Test func whiteSpaceAroundTheNumberIsIgnored() {
    for text in ["0.5\n", " 0.5", "\t0.5\r", "0.5\0\0", "\r\n0.5\r\n"] {
      #expect(
        BlendMicroClient.decode(Array(text.utf8), at: .zero)
          == .sample(ECGSample(time: .zero, amplitude: 0.5, text: text)))
    }
    #expect(
      BlendMicroClient.decode(Array("0. 5".utf8), at: .zero) == .malformed(bytes: Array("0. 5".utf8), time: .zero))
  }

  @Test func rPeaksFollowTheHeartRateAndArrhythmiaIsIrregular() {
    let steady = SyntheticECG(heartRate: 75)
    let peaks = steady.rPeaks(until: 60)
    let rr = zip(peaks.dropFirst(), peaks).map { $0 - $1 }
    let rate = 60 / (rr.reduce(0, +) / Double(rr.count))
    #expect(abs(rate - 75) < 1)
    #expect(rr.allSatisfy { abs($0 - 0.8) < 0.8 * 0.03 })
    let irregular = SyntheticECG(heartRate: 75, arrhythmiaEpisodes: [10...40]).beats(until: 60)
    #expect(irregular.contains { $0.irregular && abs($0.rr - 0.8) > 0.8 * 0.1 })
  }

  @Test func writesToRXReachTheBoardInOrder() async throws {
    let board = BlendMicro()
    try await air.host(board)
    let client = BlendMicroClient(link: try air.makeCentral(), clock: clock)
    try await client.connect(timeout: .seconds(5))
    for command in ["a", "bb", "ccc"] { try await client.send(Array(command.utf8)) }
    await clock.advance(by: .milliseconds(10))
    #expect(await board.received == [Array("a".utf8), Array("bb".utf8), Array("ccc".utf8)])
    await #expect(throws: GATTError.self) { try await client.send(Array(repeating: 0x41, count: 21)) }
  }

  @Test func boardDisconnectingEndsTheStreamAndIsReported() async throws {
    let board = BlendMicro()
    let id = try await air.host(board)
    let client = BlendMicroClient(link: try air.makeCentral(), clock: clock)
    try await client.connect(timeout: .seconds(5))
    let readings = try await client.readings()
    let states = await client.states()
    let drain = Task {
      var count = 0
      do {
        for try await _ in readings { count += 1 }
        return (count, "finished")
      } catch {
        return (count, "\(error)")
      }
    }
    await clock.advance(by: .seconds(1))
    await air.loseLinks(to: id)
    await clock.advance(by: .milliseconds(10))
    let (count, ending) = await drain.value
    #expect(count >= 99 && count <= 101)
    #expect(ending != "finished")
    var iterator = states.makeAsyncIterator()
    var last: BlendMicroClient.LinkState?
    while let state = await iterator.next() {
      last = state
      if case .disconnected = state { break }
    }
    if case .disconnected = last {
    } else {
      Issue.record("the client did not report the disconnect: \(String(describing: last))")
    }
  }
}
