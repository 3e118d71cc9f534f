import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// A small stand-in for the Kardia analysis server: WebSocket on one path
/// (`/ecg`), one JSON event `{"amplitude", "time"}` per text frame, and every
/// `analysisInterval`-th event answered with `{"heartRate", "statusCode", "time"}`
/// from `HeartRateAnalysis` of the connection's last `window` of samples.
/// A frame it cannot read is answered with `{"error": "…"}` and the connection stays up.
///
/// Shaped like a swift-service-lifecycle service: `run()` serves until its task
/// is cancelled, then says goodbye to connected clients (close 1001), closes
/// every channel and shuts down the event loop group it created.
///
/// ```swift
/// let server = KardiaAnalysisServer(configuration: .init(port: 0))
/// let serving = Task { try await server.run() }
/// let port = try await server.listeningPort()
/// …
/// serving.cancel()
/// try await serving.value
/// ```
public actor KardiaAnalysisServer {
  /// Where the server listens and how it analyses.
  public struct Configuration: Hashable, Sendable {
    /// The address to bind.
    public var host: String
    /// The port to bind; 0 picks a free one (see `listeningPort()`).
    public var port: Int
    /// The WebSocket path; any other path is answered 404.
    public var path: String
    /// How much of each connection's stream is analysed (by sample times).
    public var window: Duration
    /// Answer every this many accepted events (1: every event).
    public var analysisInterval: Int

    public init(
      host: String = "127.0.0.1", port: Int = 0, path: String = "/ecg", window: Duration = .seconds(10),
      analysisInterval: Int = 10
    ) {
      self.host = host
      self.port = port
      self.path = path
      self.window = window
      self.analysisInterval = analysisInterval
    }
  }

  private enum Phase {
    case idle, starting
    case listening(port: Int)
    case finished
  }

  private enum Connection: Sendable {
    case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
    /// A request that was not upgraded. `refusedURI` is the target of an
    /// upgrade request refused for its path: NIO passes on only the end of
    /// such a request, not its head.
    case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, refusedURI: String?)
  }

  /// One accepted connection: its channel, and how its HTTP upgrade ends.
  private struct Accepted: Sendable {
    var channel: any Channel
    var upgrade: EventLoopFuture<Connection>
    var progress: ConnectionProgress
  }

  /// What one connection's handlers learnt before its upgrade settled (they
  /// all run on the connection's event loop; the lock makes that checkable).
  private final class ConnectionProgress: Sendable {
    private struct State {
      var refusedURI: String?
      var settled = false
    }
    private let state = Mutex(State())

    var refusedURI: String? {
      get { state.withLock { $0.refusedURI } }
      set { state.withLock { $0.refusedURI = newValue } }
    }

    var settled: Bool {
      get { state.withLock { $0.settled } }
      set { state.withLock { $0.settled = newValue } }
    }
  }

  public nonisolated let configuration: Configuration
  private let eventLoopGroup: (any EventLoopGroup)?
  private var phase = Phase.idle
  private var portWaiters: [Int: CheckedContinuation<Int, any Error>] = [:]
  private var nextWaiter = 0

  /// A server that runs on `eventLoopGroup`, or on a one-thread group of its own
  /// (shut down when `run()` ends) when none is given.
  public init(configuration: Configuration = Configuration(), eventLoopGroup: (any EventLoopGroup)? = nil) {
    self.configuration = configuration
    self.eventLoopGroup = eventLoopGroup
  }

  /// The bound port while the server is listening.
  public var port: Int? {
    guard case .listening(let port) = phase else { return nil }
    return port
  }

  /// Waits until `run()` is listening and returns the bound port; throws
  /// `KardiaError.notListening` if the server stopped first, and
  /// `CancellationError` if the waiting task is cancelled.
  public func listeningPort() async throws -> Int {
    switch phase {
    case .listening(let port): return port
    case .finished: throw KardiaError.notListening
    case .idle, .starting:
      nextWaiter += 1
      let id = nextWaiter
      return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
          if Task.isCancelled {
            continuation.resume(throwing: CancellationError())
          } else {
            portWaiters[id] = continuation
          }
        }
      } onCancel: {
        Task { await self.cancelWaiter(id) }
      }
    }
  }

  private func cancelWaiter(_ id: Int) {
    portWaiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
  }

  /// Listens and serves until the calling task is cancelled (then returns
  /// normally) or binding fails (then throws). A server runs once.
  public func run() async throws {
    guard case .idle = phase else { throw KardiaError.alreadyRun }
    phase = .starting
    let ownGroup = eventLoopGroup == nil ? MultiThreadedEventLoopGroup(numberOfThreads: 1) : nil
    let result: Result<Void, any Error>
    do {
      try await serve(on: eventLoopGroup ?? ownGroup!)
      result = .success(())
    } catch is CancellationError {
      result = .success(())
    } catch {
      result = .failure(error)
    }
    phase = .finished
    for waiter in portWaiters.values { waiter.resume(throwing: KardiaError.notListening) }
    portWaiters = [:]
    try await ownGroup?.shutdownGracefully()
    try result.get()
  }

  private func listening(on port: Int) {
    phase = .listening(port: port)
    for waiter in portWaiters.values { waiter.resume(returning: port) }
    portWaiters = [:]
  }

  private func serve(on group: any EventLoopGroup) async throws {
    let configuration = self.configuration
    let path = configuration.path
    let listener = try await ServerBootstrap(group: group)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .bind(host: configuration.host, port: configuration.port) { channel in
        channel.eventLoop.makeCompletedFuture {
          let progress = ConnectionProgress()
          let upgrade = try Self.configure(channel, path: path, progress: progress)
          return Accepted(channel: channel, upgrade: upgrade, progress: progress)
        }
      }
    listening(on: listener.channel.localAddress?.port ?? configuration.port)
    try await withThrowingDiscardingTaskGroup { connections in
      try await listener.executeThenClose { accepted in
        for try await connection in accepted {
          connections.addTask { await Self.handle(connection, configuration: configuration) }
        }
      }
    }
  }

  /// HTTP/1 with a WebSocket upgrade on `path` only.
  private nonisolated static func configure(
    _ channel: any Channel, path: String, progress: ConnectionProgress
  ) throws -> EventLoopFuture<Connection> {
    let upgrader = NIOTypedWebSocketServerUpgrader<Connection>(
      shouldUpgrade: { channel, head in
        let onPath = requestPath(head.uri) == path
        if !onPath { progress.refusedURI = head.uri }
        return channel.eventLoop.makeSucceededFuture(onPath ? HTTPHeaders() : nil)
      },
      upgradePipelineHandler: { channel, _ in
        channel.eventLoop.makeCompletedFuture {
          progress.settled = true
          // A fragmented message reaches the session whole.
          try channel.pipeline.syncOperations.addHandler(
            NIOWebSocketFrameAggregator(
              minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: 1 << 16))
          return .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
        }
      }
    )
    let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Connection>(
      upgraders: [upgrader],
      notUpgradingCompletionHandler: { channel in
        channel.eventLoop.makeCompletedFuture {
          progress.settled = true
          return .http(try NIOAsyncChannel(wrappingChannelSynchronously: channel), refusedURI: progress.refusedURI)
        }
      }
    )
    return try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
      configuration: .init(upgradeConfiguration: upgrade))
  }

  private nonisolated static func handle(_ accepted: Accepted, configuration: Configuration) async {
    let channel = accepted.channel
    // A client that sends nothing is not waited for longer than this.
    let idle = channel.eventLoop.scheduleTask(in: .seconds(10)) {
      if !accepted.progress.settled { channel.close(promise: nil) }
    }
    await withTaskCancellationHandler {
      // One connection's failure is its own: the server goes on. A failed
      // upgrade (a WebSocket request without a valid key) closes the connection.
      do {
        switch try await accepted.upgrade.get() {
        case .webSocket(let channel):
          idle.cancel()
          try await serveWebSocket(channel, configuration: configuration)
        case .http(let channel, let refusedURI):
          idle.cancel()
          try await refuse(channel, path: configuration.path, refusedURI: refusedURI)
        }
      } catch {
        channel.close(promise: nil)
      }
    } onCancel: {
      // The server is stopping. A connection still negotiating is closed now;
      // the others say goodbye first, and are closed in a second whatever happens.
      if accepted.progress.settled {
        channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
      } else {
        channel.close(promise: nil)
      }
    }
  }

  private nonisolated static func serveWebSocket(
    _ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, configuration: Configuration
  ) async throws {
    var session = KardiaSession(window: configuration.window, interval: configuration.analysisInterval)
    try await channel.executeThenClose { inbound, outbound in
      do {
        for try await frame in inbound {
          switch frame.opcode {
          case .text:
            if let reply = session.receive(String(buffer: frame.unmaskedData)) {
              try await outbound.write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: reply)))
            }
          case .binary:
            let reply = KardiaSession.binaryRefusal()
            try await outbound.write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: reply)))
          case .ping:
            try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
          case .connectionClose:
            // Answer with the client's code (the first two bytes), then close.
            var data = frame.unmaskedData
            let code = data.readSlice(length: 2) ?? ByteBuffer()
            try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: code))
            return
          default:
            break
          }
        }
      } catch is CancellationError {}
      if Task.isCancelled {
        // The server is stopping: tell the client (1001 going away) before the channel closes.
        var code = ByteBuffer()
        code.write(webSocketErrorCode: .goingAway)
        let goodbye = WebSocketFrame(fin: true, opcode: .connectionClose, data: code)
        try? await channel.channel.writeAndFlush(goodbye).get()
      }
    }
  }

  /// A request that did not upgrade: 404 off the WebSocket path, 426 for a
  /// plain request on it, 400 for a WebSocket upgrade on it that NIO's
  /// upgrader found invalid (no `Sec-WebSocket-Key`, another version).
  /// An upgrade request's head is not passed on by the pipeline, only its
  /// end: `refusedURI` is its target when it was refused for its path, and an
  /// end arriving first marks one refused for its headers.
  private nonisolated static func refuse(
    _ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, path: String, refusedURI: String?
  ) async throws {
    try await channel.executeThenClose { inbound, outbound in
      let status: HTTPResponseStatus
      if refusedURI != nil {
        status = .notFound
      } else {
        var first: HTTPServerRequestPart?
        for try await part in inbound {
          first = part
          break
        }
        switch first {
        case nil: return
        case .head(let request): status = requestPath(request.uri) == path ? .upgradeRequired : .notFound
        case .body, .end: status = .badRequest
        }
      }
      let text =
        switch status {
        case .upgradeRequired: "\(path) takes WebSocket connections only\n"
        case .badRequest: "not a valid WebSocket upgrade: send Sec-WebSocket-Key and Sec-WebSocket-Version: 13\n"
        default: "no such path: use \(path)\n"
        }
      let body = ByteBuffer(string: text)
      var headers = HTTPHeaders()
      headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
      headers.add(name: "Content-Length", value: String(body.readableBytes))
      headers.add(name: "Connection", value: "close")
      if status == .upgradeRequired { headers.add(name: "Upgrade", value: "websocket") }
      try await outbound.write(
        contentsOf: [
          .head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)),
          .body(.byteBuffer(body)),
          .end(nil),
        ])
    }
  }

  private nonisolated static func requestPath(_ uri: String) -> Substring {
    uri.prefix { $0 != "?" && $0 != "#" }
  }
}
