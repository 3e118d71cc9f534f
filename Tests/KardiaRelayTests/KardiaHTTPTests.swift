import Foundation
import KardiaRelay
import Testing

/// What the analysis server answers to HTTP that is not a good WebSocket
/// upgrade, and how both sides bound their waiting.
@Suite(.timeLimit(.minutes(1)))
struct KardiaHTTPTests {
  static func get(_ path: String, headers: [String] = []) -> String {
    (["GET \(path) HTTP/1.1", "Host: 127.0.0.1"] + headers + ["", ""]).joined(separator: "\r\n")
  }

  static let upgrade = ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13"]
  static let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="

  @Test func plainRequestsArePollingWhichIsNotServedAndElsewhere404() async throws {
    try await TestServer.with { server in
      let polling = try await TimedOut.within(.seconds(15), "the polling answer") {
        try await RawHTTP.exchange(Self.get("/socket.io/?EIO=3&transport=polling"), port: server.port)
      }
      #expect(polling.hasPrefix("HTTP/1.1 400"), "\(polling)")
      #expect(polling.contains("transport=polling is not served: connect with transport=websocket"))
      let plain = try await TimedOut.within(.seconds(15), "the plain answer") {
        try await RawHTTP.exchange(Self.get("/socket.io/?EIO=4&transport=websocket"), port: server.port)
      }
      #expect(plain.hasPrefix("HTTP/1.1 400"), "\(plain)")
      #expect(plain.contains("send this request as a WebSocket upgrade"))
      let elsewhere = try await TimedOut.within(.seconds(15), "the 404 answer") {
        try await RawHTTP.exchange(Self.get("/index.html"), port: server.port)
      }
      #expect(elsewhere.hasPrefix("HTTP/1.1 404"), "\(elsewhere)")
      #expect(elsewhere.contains("use /socket.io/"))
    }
  }

  @Test(arguments: [
    ("/socket.io/?transport=websocket", "missing EIO"),
    ("/socket.io/?EIO=5&transport=websocket", "unsupported Engine.IO version EIO=5: this server speaks 2, 3, 4"),
    ("/socket.io/?EIO=1&transport=websocket", "unsupported Engine.IO version EIO=1"),
    ("/socket.io/?EIO=4", "missing transport"),
    ("/socket.io/?EIO=4&transport=polling", "transport=polling is not served"),
  ])
  func upgradesWithoutAServedEngineIOVersionAndTransportAre400(target: String, saying: String) async throws {
    try await TestServer.with { server in
      let answer = try await TimedOut.within(.seconds(15), "the 400 answer") {
        try await RawHTTP.exchange(Self.get(target, headers: Self.upgrade + [Self.key]), port: server.port)
      }
      #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
      #expect(answer.contains(saying), "\(answer)")
    }
  }

  @Test func anUpgradeWithoutAWebSocketKeyIs400NotLeftHanging() async throws {
    try await TestServer.with { server in
      let request = Self.get(
        "/socket.io/?EIO=4&transport=websocket", headers: ["Connection: Upgrade", "Upgrade: websocket"])
      let answer = try await TimedOut.within(.seconds(15), "the 400 answer") {
        try await RawHTTP.exchange(request, port: server.port)
      }
      #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
      #expect(answer.contains("Sec-WebSocket-Key"))
      // …and the server still serves.
      let relay = try await server.connect()
      await relay.close()
    }
  }

  @Test func aClientThatNeverPingsIsClosedAfterPingIntervalPlusPingTimeout() async throws {
    try await TestServer.with(.init(pingInterval: .milliseconds(200), pingTimeout: .milliseconds(200))) { server in
      // A WebSocket client that says nothing after the upgrade (revision 3: the client must ping).
      let request = Self.get("/socket.io/?EIO=3&transport=websocket", headers: Self.upgrade + [Self.key])
      let clock = ContinuousClock()
      let started = clock.now
      let answer = try await TimedOut.within(.seconds(30), "the ping timeout") {
        try await RawHTTP.exchange(request, port: server.port)
      }
      let waited = started.duration(to: clock.now)
      #expect(answer.hasPrefix("HTTP/1.1 101"), "\(answer)")
      // The server's frames: the open packet, the namespace's connect, then a close 1008 saying why.
      #expect(answer.contains(#""pingInterval":200,"pingTimeout":200"#))
      #expect(answer.contains("40"))
      // The close code 1008 is 0x03 0xF0, and 0xF0 alone is no UTF-8: read back as U+FFFD.
      #expect(answer.hasSuffix("\u{03}\u{FFFD}ping timeout: no ping within 400 ms (pingInterval + pingTimeout)"))
      // At least the 400 ms the protocol allows; the upper bound only tells a close from a hang.
      #expect(waited >= .milliseconds(400) && waited < .seconds(20), "\(waited)")
    }
  }

  @Test func shutdownClosesAConnectionThatNeverSentARequest() async throws {
    let server = try await TestServer.start()
    let (up, connected) = AsyncStream<Void>.makeStream()
    let idle = Task { try await RawHTTP.exchange("", port: server.port) { connected.yield() } }
    // Stopping before the connection is up would test a refusal instead (a
    // loaded machine once took over 100 ms to connect); then give the server
    // a moment to accept it.
    _ = try await TimedOut.within(.seconds(15), "the idle connection") { await up.first { true } }
    try await Task.sleep(for: .milliseconds(200))
    try await server.stop()
    let answer = try await TimedOut.within(.seconds(20), "the idle connection closing") { try await idle.value }
    #expect(answer.isEmpty)
  }

  @Test func connectingToAServerThatNeverAnswersTimesOut() async throws {
    let silent = try await RawHTTP.silentServer()
    defer { Task { await silent.stop() } }
    let clock = ContinuousClock()
    let started = clock.now
    await #expect(throws: KardiaError.timedOut) {
      // Bounds far from the relay's 300 ms, so that a loaded machine cannot tell them apart.
      try await TimedOut.within(.seconds(30), "the relay's own time limit") {
        try await KardiaRelay.connect(host: "127.0.0.1", port: silent.port, timeout: .milliseconds(300))
      }
    }
    #expect(started.duration(to: clock.now) < .seconds(20))
  }

  @Test func connectingWhereNothingListensFails() async throws {
    let silent = try await RawHTTP.silentServer()
    await silent.stop()
    await #expect(throws: (any Error).self) {
      try await TimedOut.within(.seconds(15), "refusal") {
        try await KardiaRelay.connect(host: "127.0.0.1", port: silent.port, timeout: .seconds(2))
      }
    }
  }
}
