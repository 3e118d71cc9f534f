import KardiaRelay

/// An analysis server running on 127.0.0.1 on a free port, for one test.
struct TestServer {
  let server: KardiaAnalysisServer
  let serving: Task<Void, any Error>
  let port: Int

  static func start(_ configuration: KardiaAnalysisServer.Configuration = .init()) async throws -> TestServer {
    let server = KardiaAnalysisServer(configuration: configuration)
    let serving = Task { try await server.run() }
    let port = try await TimedOut.within(.seconds(5), "binding") { try await server.listeningPort() }
    return TestServer(server: server, serving: serving, port: port)
  }

  /// Runs `body` against a fresh server and stops the server afterwards, whatever happens.
  static func with<T>(
    _ configuration: KardiaAnalysisServer.Configuration = .init(), _ body: (TestServer) async throws -> T
  ) async throws -> T {
    let running = try await start(configuration)
    do {
      let result = try await body(running)
      try await running.stop()
      return result
    } catch {
      try? await running.stop()
      throw error
    }
  }

  func connect(path: String = "/socket.io/", version: EngineIOVersion = .two) async throws -> KardiaRelay {
    try await KardiaRelay.connect(host: "127.0.0.1", port: port, path: path, version: version, epoch: ECGFeed.epoch)
  }

  /// Cancels `run()` and waits for it to return, at most ten seconds.
  func stop() async throws {
    serving.cancel()
    let serving = self.serving
    try await TimedOut.within(.seconds(10), "server shutdown") { try await serving.value }
  }
}
