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

  @Test func aPlainRequestToTheSocketPathIs426AndElsewhere404() async throws {
    try await TestServer.with { server in
      let onPath = try await TimedOut.within(.seconds(5), "the 426 answer") {
        try await RawHTTP.exchange(Self.get("/ecg"), port: server.port)
      }
      #expect(onPath.hasPrefix("HTTP/1.1 426"), "\(onPath)")
      #expect(onPath.lowercased().contains("upgrade: websocket"))
      let elsewhere = try await TimedOut.within(.seconds(5), "the 404 answer") {
        try await RawHTTP.exchange(Self.get("/index.html"), port: server.port)
      }
      #expect(elsewhere.hasPrefix("HTTP/1.1 404"), "\(elsewhere)")
      #expect(elsewhere.contains("use /ecg"))
    }
  }

  @Test func anUpgradeWithoutAWebSocketKeyIs400NotLeftHanging() async throws {
    try await TestServer.with { server in
      let request = Self.get("/ecg", headers: ["Connection: Upgrade", "Upgrade: websocket"])
      let answer = try await TimedOut.within(.seconds(5), "the 400 answer") {
        try await RawHTTP.exchange(request, port: server.port)
      }
      #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
      #expect(answer.contains("Sec-WebSocket-Key"))
      // …and the server still serves.
      let relay = try await server.connect()
      await relay.close()
    }
  }

  @Test func shutdownClosesAConnectionThatNeverSentARequest() async throws {
    let server = try await TestServer.start()
    let (up, connected) = AsyncStream<Void>.makeStream()
    let idle = Task { try await RawHTTP.exchange("", port: server.port) { connected.yield() } }
    // Stopping before the connection is up would test a refusal instead (a
    // loaded machine once took over 100 ms to connect); then give the server
    // a moment to accept it.
    _ = try await TimedOut.within(.seconds(5), "the idle connection") { await up.first { true } }
    try await Task.sleep(for: .milliseconds(200))
    try await server.stop()
    let answer = try await TimedOut.within(.seconds(3), "the idle connection closing") { try await idle.value }
    #expect(answer.isEmpty)
  }

  @Test func connectingToAServerThatNeverAnswersTimesOut() async throws {
    let silent = try await RawHTTP.silentServer()
    defer { Task { await silent.stop() } }
    let clock = ContinuousClock()
    let started = clock.now
    await #expect(throws: KardiaError.timedOut) {
      try await TimedOut.within(.seconds(5), "the relay's own time limit") {
        try await KardiaRelay.connect(host: "127.0.0.1", port: silent.port, timeout: .milliseconds(300))
      }
    }
    #expect(started.duration(to: clock.now) < .seconds(3))
  }

  @Test func connectingWhereNothingListensFails() async throws {
    let silent = try await RawHTTP.silentServer()
    await silent.stop()
    await #expect(throws: (any Error).self) {
      try await TimedOut.within(.seconds(5), "refusal") {
        try await KardiaRelay.connect(host: "127.0.0.1", port: silent.port, timeout: .seconds(2))
      }
    }
  }
}
