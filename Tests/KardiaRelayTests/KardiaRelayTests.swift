import BlendMicroClient
import Foundation
import KardiaRelay
import Signals
import Testing

/// The relay and a real analysis server, Socket.IO over WebSocket on 127.0.0.1.
@Suite(.timeLimit(.minutes(1)))
struct KardiaRelayTests {
  @Test func normalRhythmAt72BPMIsReportedNormalWithinTwoBPM() async throws {
    try await TestServer.with { server in
      let relay = try await server.connect()
      // 15 s at 100 samples/s; the server answers every 10th sample.
      let readings = ECGFeed.readings(SyntheticECG(heartRate: 72), count: 1500)
      let analyses = try await Self.relay(readings, through: relay, expecting: 150)
      #expect(analyses.count == 150)
      // The detector skips the first second of a window; the third R peak
      // after that (a rhythm needs two RR intervals) comes by about 4.5 s at
      // 72 bpm. From 5 s on, a normal rhythm.
      #expect(analyses.first?.status == .insufficientData)
      #expect(analyses.prefix(30).allSatisfy { $0.status == .insufficientData })
      #expect(analyses.dropFirst(50).allSatisfy { $0.status == .normal })
      // Once the 10 s window is full, the rate is within 2 bpm of 72.
      for analysis in analyses.dropFirst(99) {
        let rate = try #require(analysis.heartRate)
        #expect(abs(rate - 72) <= 2, "\(analysis)")
      }
      // Each analysis says which sample it went up to: every 10th, in order.
      let times = analyses.compactMap { $0.time?.timeIntervalSince(ECGFeed.epoch) }
      #expect(times.count == 150)
      #expect(zip(times, (1...150).map { Double($0 * 10 - 1) / 100 }).allSatisfy { abs($0 - $1) < 0.0005 })
      #expect(await relay.arrhythmiaLog.entries.isEmpty)
      await relay.close()
    }
  }

  @Test func arrhythmiaIsReportedAndLoggedOncePerEpisode() async throws {
    try await TestServer.with(.init(analysisInterval: 25)) { server in
      let relay = try await server.connect()
      // 48 s with two irregular episodes; seed 1's analysis crosses into
      // arrhythmia once per episode (other seeds can flicker within one, and
      // then the app, as this log, counts a fresh episode each time).
      let ecg = SyntheticECG(heartRate: 72, arrhythmiaEpisodes: [6...14, 30...38], seed: 1)
      let analyses = try await Self.relay(ECGFeed.readings(ecg, count: 4800), through: relay, expecting: 192)
      let arrhythmic = analyses.filter { $0.status == .arrhythmia }
      // Reported again and again while the irregular beats are in the window…
      #expect(arrhythmic.count > 20)
      // …but never before the first episode, and not at the end (8 s after the second).
      #expect(analyses.prefix { $0.time! < ECGFeed.epoch + 6 }.allSatisfy { $0.status != .arrhythmia })
      #expect(analyses.last?.status == .normal)
      // …and logged once per episode, when it was first reported.
      let log = await relay.arrhythmiaLog
      try #require(log.entries.count == 2, "\(log.entries)")
      let starts = log.entries.map { $0.time.timeIntervalSince(ECGFeed.epoch) }
      #expect((6...24).contains(starts[0]), "\(starts)")
      #expect((30...48).contains(starts[1]), "\(starts)")
      #expect(
        log.entries.map(\.time)
          == analyses.indices.compactMap { index in
            let fresh =
              analyses[index].status == .arrhythmia && (index == 0 || analyses[index - 1].status != .arrhythmia)
            return fresh ? analyses[index].time : nil
          })
      #expect(log.lastCode == "200")
      await relay.close()
    }
  }

  /// `answersArrived()` returns only once the answers to everything sent
  /// before it are in: a run on virtual time sends 15 s of samples at once,
  /// then relays the board's disconnect, whose reset must come after them.
  @Test func answersToWhatWasSentHaveArrivedWhenAPingIsAnswered() async throws {
    try await TestServer.with { server in
      let relay = try await server.connect()
      let readings = ECGFeed.readings(SyntheticECG(heartRate: 72), count: 1500)
      for reading in readings { _ = try await relay.send(reading) }
      try await relay.answersArrived(within: .seconds(20))
      // The server answers every 10th sample; the log has taken all 150.
      #expect(await relay.analysesTaken == 150)
      await relay.close()
      // A closed relay has nothing to wait for.
      await #expect(throws: KardiaError.closed) { try await relay.answersArrived(within: .seconds(1)) }
    }
  }

  @Test func badEventsGetAnErrorEventAndTheConnectionStaysUp() async throws {
    try await TestServer.with(.init(analysisInterval: 1)) { server in
      let relay = try await server.connect()
      let watchdog = Task {
        try await Task.sleep(for: .seconds(5))
        await relay.close()
      }
      defer { watchdog.cancel() }
      var replies = relay.replies.makeAsyncIterator()
      func reply(to text: String) async throws -> KardiaReply? {
        try await relay.sendRaw(text)
        return try await replies.next(isolation: #isolation)
      }
      func expectError(_ text: String, saying words: [String]) async throws {
        let answer = try await reply(to: text)
        guard case .error(let message) = answer else {
          Issue.record("\(text) got \(String(describing: answer)), not an error")
          return
        }
        for word in words { #expect(message.contains(word), "\(text): \(message)") }
      }
      try await expectError(#"42["message",{"amplitude":0.5}]"#, saying: ["missing key \"time\""])
      try await expectError(#"42["message",{"amplitude":"x","time":"2025-06-15T15:06:40Z"}]"#, saying: ["\"x\""])
      try await expectError(#"42["heartbeat"]"#, saying: ["unknown event \"heartbeat\""])
      try await expectError("42[", saying: ["not JSON"])
      try await relay.sendBinary([4, 1, 2, 3])
      #expect(
        try await replies.next(isolation: #isolation)
          == .error("binary messages are not read: send events as text, as the Kardia app does"))

      // Still connected: good events, with and without fractional seconds or a UTC offset, are analysed.
      let first = try await reply(to: #"42["message",{"amplitude":"0.5","time":"2025-06-15T15:06:40Z"}]"#)
      #expect(first == .analysis(KardiaAnalysis(statusCode: "0", heartRateText: "- -", time: ECGFeed.epoch)))
      let second = try await reply(to: #"42["message",{"amplitude":"0.25","time":"2025-06-15T17:06:40.25+02:00"}]"#)
      #expect(second == .analysis(KardiaAnalysis(statusCode: "0", heartRateText: "- -", time: ECGFeed.epoch + 0.25)))
      // A sample from before the previous one is refused, and says so.
      try await expectError(
        #"42["message",{"amplitude":"0.5","time":"2025-06-15T15:06:40.100Z"}]"#, saying: ["before the previous sample"])
      try await relay.send(ECGSample(time: .milliseconds(260), amplitude: 0.1, text: "0.1\r\n"))
      let third = try await replies.next()
      #expect(third == .analysis(KardiaAnalysis(statusCode: "0", heartRateText: "- -", time: ECGFeed.epoch + 0.26)))
      #expect(await relay.graph.points == ["0.1\r\n"])
      #expect(await relay.serverCloseCode == nil)

      // A frame that is not Engine.IO ends the session, and the close frame says why.
      try await relay.sendRaw("hello")
      #expect(try await replies.next() == nil)
      #expect(await relay.serverCloseCode == 1002)
      #expect(await relay.serverCloseReason?.contains("not an Engine.IO packet") == true)
      await relay.close()
    }
  }

  @Test(arguments: EngineIOVersion.allCases)
  func theRelaySpeaksEachEngineIOVersionAndKeepsTheHeartbeat(version: EngineIOVersion) async throws {
    // A heartbeat every 200 ms. The timeout is long, as on a loaded two-core
    // machine a task may wait a second for a thread; SocketIOSessionTests and
    // KardiaHTTPTests show what a missed heartbeat does.
    try await TestServer.with(.init(pingInterval: .milliseconds(200), pingTimeout: .seconds(10))) { server in
      let relay = try await server.connect(version: version)
      let readings = ECGFeed.readings(SyntheticECG(heartRate: 72), count: 100)
      let analyses = try await TimedOut.within(.seconds(10), "analyses over \(version)") {
        var analyses: [KardiaAnalysis] = []
        for reading in readings {
          try await relay.send(reading)
          try await Task.sleep(for: .milliseconds(15))
        }
        for try await analysis in relay.analyses {
          analyses.append(analysis)
          if analyses.count == 10 { break }
        }
        return analyses
      }
      #expect(analyses.count == 10)
      let handshake = try #require(await relay.handshake)
      #expect(handshake.pingInterval == .milliseconds(200) && handshake.pingTimeout == .seconds(10))
      #expect(handshake.sid.count == 20)
      // About 1.5 s: some seven heartbeats, at least three however slow the machine.
      let heartbeats = await relay.heartbeats
      #expect(heartbeats >= 3, "\(heartbeats)")
      #expect(await relay.serverCloseCode == nil)
      await relay.close()
    }
  }

  @Test func theRelayShowsWhatTheAppShowedAndTellsTheServerOfABLEDisconnect() async throws {
    try await TestServer.with(.init(analysisInterval: 100)) { server in
      let relay = try await server.connect()
      #expect(await relay.statusCode == "0")
      #expect(await relay.statusDescription == "N/A")
      #expect(await relay.heartRateText == "- -")
      let readings = ECGFeed.readings(SyntheticECG(heartRate: 72), count: 1000)
      let analyses = try await Self.relay(readings, through: relay, expecting: 10)
      #expect(analyses.last?.statusCode == "200")
      #expect(await relay.statusDescription == "NSR")
      let rate = try #require(Double(await relay.heartRateText))
      #expect(abs(rate - 72) <= 2)
      #expect(await relay.graph.points.count == 15)

      try await relay.bleDisconnected()
      #expect(await relay.statusCode == "0")
      #expect(await relay.statusDescription == "N/A")
      #expect(await relay.heartRateText == "- -")
      // The server starts over: the board's clock may too, and the window is empty.
      let again = ECGFeed.readings(SyntheticECG(heartRate: 72), count: 100)
      let after = try await Self.relay(again, through: relay, expecting: 1)
      #expect(after == [KardiaAnalysis(statusCode: "0", heartRateText: "- -", time: ECGFeed.epoch + 0.99)])
      await relay.close()
    }
  }

  @Test(arguments: ["/", "/ecg", "/socket.io/x", "/SOCKET.IO/"])
  func otherPathsAreRefusedWith404(path: String) async throws {
    try await TestServer.with { server in
      await #expect(throws: KardiaError.upgradeRefused(status: 404)) {
        try await server.connect(path: path)
      }
      // The server is still there for the right path (without its final /, and with more in the query).
      let relay = try await server.connect(path: "/socket.io?patient=1")
      await relay.close()
    }
  }

  @Test func aNotificationThatIsNotANumberIsRelayedAsTheAppDidAndRefused() async throws {
    try await TestServer.with(.init(analysisInterval: 1)) { server in
      let relay = try await server.connect()
      var replies = relay.replies.makeAsyncIterator()
      #expect(try await relay.send(.malformed(bytes: Array("4.512.2553\r\n".utf8), time: .milliseconds(10))))
      #expect(
        try await replies.next(isolation: #isolation)
          == .error("\"amplitude\" \"4.512.2553\r\n\" is not a decimal number"))
      // Not UTF-8: the app stopped on these; nothing is sent.
      #expect(try await relay.send(.malformed(bytes: [0xFF, 0x30], time: .milliseconds(20))) == false)
      #expect(await relay.graph.points == ["4.512.2553\r\n"])
      #expect(await relay.graph.values == [4.512])
      try await relay.send(ECGSample(time: .milliseconds(30), amplitude: 0.5, text: "0.5"))
      #expect(
        try await replies.next(isolation: #isolation).map { if case .analysis = $0 { true } else { false } } == true)
      await relay.close()
    }
  }

  @Test func withReconnectionTheRelayConnectsAgainToAServerThatCameBack() async throws {
    let first = try await TestServer.start(.init(analysisInterval: 10))
    let relay = try await KardiaRelay.connect(
      host: "127.0.0.1", port: first.port, epoch: ECGFeed.epoch,
      reconnection: .init(attempts: 20, wait: .milliseconds(100)))
    var analyses = relay.analyses.makeAsyncIterator()
    let readings = ECGFeed.readings(SyntheticECG(heartRate: 72), count: 20)
    try await relay.send(contentsOf: readings.prefix(10).compactMap { if case .sample(let s) = $0 { s } else { nil } })
    #expect(try await analyses.next(isolation: #isolation) != nil)
    // The server goes away (1001) and another comes up on the same port.
    try await first.stop()
    let second = try await TestServer.start(.init(port: first.port, analysisInterval: 10))
    defer { Task { try? await second.stop() } }
    let reconnected = try await TimedOut.within(.seconds(5), "reconnecting") {
      while await relay.reconnections == 0 { try await Task.sleep(for: .milliseconds(20)) }
      return await relay.reconnections
    }
    #expect(reconnected == 1)
    #expect(await relay.serverCloseCode == 1001)
    // The same relay, the same replies: the new server answers (its window starts over).
    try await relay.send(contentsOf: readings.suffix(10).compactMap { if case .sample(let s) = $0 { s } else { nil } })
    let after = try await analyses.next(isolation: #isolation)
    #expect(after?.statusCode == "0")
    #expect(after?.time == ECGFeed.epoch + 0.19)
    await relay.close()
    #expect(try await analyses.next(isolation: #isolation) == nil)
  }

  @Test func withReconnectionTheRepliesEndWhenNoAttemptSucceeds() async throws {
    let server = try await TestServer.start()
    let relay = try await KardiaRelay.connect(
      host: "127.0.0.1", port: server.port, reconnection: .init(attempts: 3, wait: .milliseconds(100)))
    let clock = ContinuousClock()
    let started = clock.now
    try await server.stop()
    try await TimedOut.within(.seconds(5), "the replies ending") {
      for try await _ in relay.replies {}
    }
    // Three attempts, 100 ms apart: at least 200 ms after the server began to leave.
    #expect(started.duration(to: clock.now) >= .milliseconds(200))
    #expect(await relay.reconnections == 0)
    await #expect(throws: KardiaError.closed) { try await relay.send(ECGSample(time: .zero, amplitude: 0)) }
  }

  @Test func closingWhileWaitingToReconnectStopsAtOnce() async throws {
    let server = try await TestServer.start()
    let relay = try await KardiaRelay.connect(
      host: "127.0.0.1", port: server.port, reconnection: .init(attempts: 100, wait: .seconds(60)))
    try await server.stop()
    try await Task.sleep(for: .milliseconds(200))
    let clock = ContinuousClock()
    let started = clock.now
    // The relay waits 60 s between attempts: closing must not wait that out.
    try await TimedOut.within(.seconds(40), "closing") { await relay.close() }
    #expect(started.duration(to: clock.now) < .seconds(30))
    #expect(
      try await TimedOut.within(.seconds(2), "the replies ending") { try await relay.replies.first { _ in true } }
        == nil)
  }

  @Test func aMessageOver64KiBEndsTheConnectionAndTheServerGoesOn() async throws {
    try await TestServer.with { server in
      let relay = try await server.connect()
      try await relay.sendRaw("42" + String(repeating: "x", count: 70_000))
      let ended = try await TimedOut.within(.seconds(5), "the connection ending") {
        do {
          for try await _ in relay.replies {}
        } catch {}
        return await relay.serverCloseCode
      }
      #expect(ended == 1009, "\(String(describing: ended))")
      await relay.close()
      let next = try await server.connect()
      await next.close()
    }
  }

  @Test func shutdownCompletesWithAClientConnected() async throws {
    let server = try await TestServer.start()
    let relay = try await server.connect()
    let analyses = try await Self.relay(
      ECGFeed.readings(SyntheticECG(heartRate: 72), count: 30), through: relay, expecting: 3)
    #expect(analyses.count == 3)

    // At most two seconds (`stop()` throws `TimedOut` past that).
    try await server.stop()
    #expect(await server.server.port == nil)
    // The relay was told the server is going away (1001), and its replies ended.
    let ended = try await TimedOut.within(.seconds(2), "the relay's replies ending") {
      for try await _ in relay.replies {}
      return await relay.serverCloseCode
    }
    #expect(ended == 1001)
    await #expect(throws: KardiaError.closed) {
      try await relay.send(ECGSample(time: .seconds(1), amplitude: 0))
    }
    // Nothing listens any more, and the server cannot be run again.
    await #expect(throws: (any Error).self) { try await server.connect() }
    await #expect(throws: KardiaError.alreadyRun) { try await server.server.run() }
  }

  /// Relays `readings` and collects the first `count` analyses (within ten seconds).
  static func relay(
    _ readings: [BlendMicroReading], through relay: KardiaRelay, expecting count: Int
  ) async throws -> [KardiaAnalysis] {
    try await TimedOut.within(.seconds(10), "\(count) analyses") {
      async let sending: Void = relay.relay(ECGFeed.stream(readings))
      var analyses: [KardiaAnalysis] = []
      for try await analysis in relay.analyses {
        analyses.append(analysis)
        if analyses.count == count { break }
      }
      try await sending
      return analyses
    }
  }
}
