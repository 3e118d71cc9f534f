import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// A small stand-in for the Kardia analysis server, speaking the app's own
/// protocol: Socket.IO over WebSocket on `/socket.io/` (Engine.IO revisions 2, 3
/// and 4). Each `message` event `{"amplitude", "time"}` goes into the
/// connection's window, and every `analysisInterval`-th is answered with a
/// `node.js` event `{"heartRate", "statusCode", "time"}` from `HeartRateAnalysis`
/// of the last `window` of samples; `/BLEDisconnect` starts the window over.
/// An event it cannot take is answered with an `/error` event and the
/// connection stays up; a frame that is not Engine.IO closes the connection
/// with the reason (see `SocketIOSession`).
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
    /// The Socket.IO path (with or without its final `/`); any other path is answered 404.
    public var path: String
    /// How much of each connection's stream is analysed (by sample times).
    public var window: Duration
    /// Answer every this many accepted events (1: every event).
    public var analysisInterval: Int
    /// How often the heartbeat goes: revision 4, the server pings this often;
    /// revisions 2 and 3, the client is asked to.
    public var pingInterval: Duration
    /// How long past `pingInterval` the server waits for the heartbeat before it closes the session.
    public var pingTimeout: Duration

    public init(
      host: String = "127.0.0.1", port: Int = 0, path: String = "/socket.io/", window: Duration = .seconds(10),
      analysisInterval: Int = 10, pingInterval: Duration = .seconds(25), pingTimeout: Duration = .seconds(20)
    ) {
      self.host = host
      self.port = port
      self.path = path
      self.window = window
      self.analysisInterval = analysisInterval
      self.pingInterval = pingInterval
      self.pingTimeout = pingTimeout
    }
  }

  /// The largest message taken (fragmented frames are reassembled up to this), in bytes.
  static let maxFrameSize = 1 << 16

  private enum Phase {
    case idle, starting
    case listening(port: Int)
    case finished
  }

  private enum Connection: Sendable {
    case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, EngineIOVersion)
    /// A request that was not upgraded. `refusal` is why an upgrade request
    /// was refused for its target: NIO passes on only the end of such a
    /// request, not its head.
    case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, refusal: Refusal?)
  }

  /// An HTTP answer instead of an upgrade.
  struct Refusal: Error, Sendable, Hashable {
    var status: HTTPResponseStatus
    var text: String
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
      var refusal: Refusal?
      var settled = false
    }
    private let state = Mutex(State())

    var refusal: Refusal? {
      get { state.withLock { $0.refusal } }
      set { state.withLock { $0.refusal = newValue } }
    }

    var settled: Bool {
      get { state.withLock { $0.settled } }
      set { state.withLock { $0.settled = newValue } }
    }
  }

  public nonisolated let configuration: Configuration
  private let eventLoopGroup: (any EventLoopGroup)?
  private nonisolated let tally = Tally()

  /// How many `/BLEDisconnect` events the server has heard, on every connection so far.
  public nonisolated var bleDisconnectsHeard: Int { tally.bleDisconnects }
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
    let tally = self.tally
    try await withThrowingDiscardingTaskGroup { connections in
      try await listener.executeThenClose { accepted in
        for try await connection in accepted {
          connections.addTask { await Self.handle(connection, configuration: configuration, tally: tally) }
        }
      }
    }
  }

  /// HTTP/1 with a WebSocket upgrade on `path` only.
  private nonisolated static func configure(
    _ channel: any Channel, path: String, progress: ConnectionProgress
  ) throws -> EventLoopFuture<Connection> {
    let upgrader = NIOTypedWebSocketServerUpgrader<Connection>(
      maxFrameSize: maxFrameSize,
      shouldUpgrade: { channel, head in
        switch handshake(head.uri, path: path) {
        case .success:
          return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
        case .failure(let refusal):
          progress.refusal = refusal
          return channel.eventLoop.makeSucceededFuture(nil)
        }
      },
      upgradePipelineHandler: { channel, head in
        channel.eventLoop.makeCompletedFuture {
          progress.settled = true
          // A fragmented message reaches the session whole.
          try channel.pipeline.syncOperations.addHandler(
            NIOWebSocketFrameAggregator(
              minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: maxFrameSize))
          let version = (try? handshake(head.uri, path: path).get()) ?? .four
          return .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel), version)
        }
      }
    )
    let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Connection>(
      upgraders: [upgrader],
      notUpgradingCompletionHandler: { channel in
        channel.eventLoop.makeCompletedFuture {
          progress.settled = true
          return .http(try NIOAsyncChannel(wrappingChannelSynchronously: channel), refusal: progress.refusal)
        }
      }
    )
    return try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
      configuration: .init(upgradeConfiguration: upgrade))
  }

  private nonisolated static func handle(_ accepted: Accepted, configuration: Configuration, tally: Tally) async {
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
        case .webSocket(let channel, let version):
          idle.cancel()
          try await serveWebSocket(channel, version: version, configuration: configuration, tally: tally)
        case .http(let channel, let refusal):
          idle.cancel()
          try await refuse(channel, path: configuration.path, refusal: refusal)
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

  /// The Engine.IO version a request asks for, or why it is refused: 404 off
  /// the path, 400 without `EIO` 2, 3 or 4, or without `transport=websocket`.
  nonisolated static func handshake(_ uri: String, path: String) -> Result<EngineIOVersion, Refusal> {
    guard normalized(requestPath(uri)) == normalized(Substring(path)) else {
      return .failure(Refusal(status: .notFound, text: "no such path: use \(path)\n"))
    }
    var query: [Substring: Substring] = [:]
    if let mark = uri.firstIndex(of: "?") {
      for pair in uri[uri.index(after: mark)...].prefix(while: { $0 != "#" }).split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        query[parts[0]] = parts.count > 1 ? parts[1] : ""
      }
    }
    let versions = EngineIOVersion.allCases.map { String($0.rawValue) }.joined(separator: ", ")
    guard let eio = query["EIO"] else {
      return .failure(Refusal(status: .badRequest, text: "missing EIO: ask for Engine.IO \(versions), e.g. EIO=4\n"))
    }
    guard let number = Int(eio), let version = EngineIOVersion(rawValue: number) else {
      return .failure(
        Refusal(status: .badRequest, text: "unsupported Engine.IO version EIO=\(eio): this server speaks \(versions)\n")
      )
    }
    guard let transport = query["transport"] else {
      return .failure(Refusal(status: .badRequest, text: "missing transport: connect with transport=websocket\n"))
    }
    guard transport == "websocket" else {
      return .failure(
        Refusal(
          status: .badRequest,
          text: "transport=\(transport) is not served: connect with transport=websocket, as the Kardia app did\n"))
    }
    return .success(version)
  }

  private nonisolated static func normalized(_ path: Substring) -> Substring {
    path.count > 1 && path.hasSuffix("/") ? path.dropLast() : path
  }

  private nonisolated static func serveWebSocket(
    _ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, version: EngineIOVersion, configuration: Configuration,
    tally: Tally
  ) async throws {
    // The reader and the heartbeat both act on the session; each writes what it decided.
    let session = SharedSession(
      SocketIOSession(
        version: version, sid: sessionID(), pingInterval: configuration.pingInterval,
        pingTimeout: configuration.pingTimeout,
        analysis: KardiaAnalysisSession(window: configuration.window, interval: configuration.analysisInterval),
        now: .now, heardBLEDisconnect: tally.heardBLEDisconnect))
    // Often enough to keep the heartbeat's deadlines to within a quarter.
    let tick = max(.milliseconds(10), min(.seconds(1), min(configuration.pingInterval, configuration.pingTimeout) / 4))
    try await channel.executeThenClose { inbound, outbound in
      do {
        try await withThrowingTaskGroup { group in
          try await write(session.withLock { $0.open() }, to: outbound)
          group.addTask {
            // The heartbeat: pings (revision 4), and the end of a session whose client fell silent.
            while true {
              try await Task.sleep(for: tick)
              let reaction = session.withLock { $0.tick(now: .now) }
              try await write(reaction, to: outbound)
              if reaction.close != nil {
                // The reader is waiting for a frame that may never come.
                channel.channel.close(promise: nil)
                return
              }
            }
          }
          defer { group.cancelAll() }
          for try await frame in inbound {
            let reaction: SocketIOSession.Reaction
            switch frame.opcode {
            case .text:
              let text = String(buffer: frame.unmaskedData)
              reaction = session.withLock { $0.receive(text: text, now: .now) }
            case .binary:
              reaction = session.withLock { $0.receiveBinary() }
            case .ping:
              try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
              continue
            case .connectionClose:
              // Answer with the client's code (the first two bytes), then close.
              var data = frame.unmaskedData
              let code = data.readSlice(length: 2) ?? ByteBuffer()
              try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: code))
              return
            default:
              continue
            }
            try await write(reaction, to: outbound)
            if reaction.close != nil { return }
          }
        }
      } catch  where Task.isCancelled {
        // The server is stopping (a write may fail for it); the client is told below.
      }
      if Task.isCancelled {
        // The server is stopping: tell the client (1001 going away) before the channel closes.
        var code = ByteBuffer()
        code.write(webSocketErrorCode: .goingAway)
        let goodbye = WebSocketFrame(fin: true, opcode: .connectionClose, data: code)
        try? await channel.channel.writeAndFlush(goodbye).get()
      }
    }
  }

  /// What the server heard, over all its connections.
  final class Tally: Sendable {
    private let disconnects = Mutex(0)
    var bleDisconnects: Int { disconnects.withLock { $0 } }
    func heardBLEDisconnect() { disconnects.withLock { $0 += 1 } }
  }

  /// One connection's session, shared by the task reading its frames and the heartbeat's.
  private final class SharedSession: Sendable {
    private let session: Mutex<SocketIOSession>

    init(_ session: sending SocketIOSession) {
      self.session = Mutex(session)
    }

    func withLock<Result: Sendable>(_ body: (inout sending SocketIOSession) -> sending Result) -> Result {
      session.withLock(body)
    }
  }

  /// Writes a reaction's frames, and its close frame (code and reason) if it ends the session.
  private nonisolated static func write(
    _ reaction: SocketIOSession.Reaction, to outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
  ) async throws {
    var frames = reaction.frames.map { WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: $0)) }
    if let close = reaction.close {
      var data = ByteBuffer()
      data.writeInteger(close.code)
      data.writeString(String(decoding: close.reason.utf8.prefix(123), as: UTF8.self))
      frames.append(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
    }
    if !frames.isEmpty { try await outbound.write(contentsOf: frames) }
  }

  /// Writes the frames that open the session.
  private nonisolated static func write(
    _ frames: [String], to outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
  ) async throws {
    try await write(SocketIOSession.Reaction(frames: frames), to: outbound)
  }

  /// A random Engine.IO session id (20 URL-safe characters).
  private nonisolated static func sessionID() -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    return String((0..<20).map { _ in alphabet.randomElement()! })
  }

  /// A request that did not upgrade: the refusal noted for an upgrade request
  /// (404 off the path, 400 for a bad Engine.IO query); for a plain request,
  /// 404 off the path, 400 on it (Engine.IO's polling transport is not
  /// served), and 400 for a WebSocket upgrade on it that NIO's upgrader found
  /// invalid (no `Sec-WebSocket-Key`, another version). An upgrade request's
  /// head is not passed on by the pipeline, only its end: an end arriving
  /// first marks one refused for its headers.
  private nonisolated static func refuse(
    _ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, path: String, refusal: Refusal?
  ) async throws {
    try await channel.executeThenClose { inbound, outbound in
      var answer: Refusal
      if let refusal {
        answer = refusal
      } else {
        var first: HTTPServerRequestPart?
        for try await part in inbound {
          first = part
          break
        }
        switch first {
        case nil:
          return
        case .head(let request):
          switch handshake(request.uri, path: path) {
          case .failure(let refusal): answer = refusal
          case .success:
            answer = Refusal(
              status: .badRequest,
              text: "only the WebSocket transport is served: send this request as a WebSocket upgrade\n")
          }
        case .body, .end:
          answer = Refusal(
            status: .badRequest,
            text: "not a valid WebSocket upgrade: send Sec-WebSocket-Key and Sec-WebSocket-Version: 13\n")
        }
      }
      let body = ByteBuffer(string: answer.text)
      var headers = HTTPHeaders()
      headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
      headers.add(name: "Content-Length", value: String(body.readableBytes))
      headers.add(name: "Connection", value: "close")
      try await outbound.write(
        contentsOf: [
          .head(HTTPResponseHead(version: .http1_1, status: answer.status, headers: headers)),
          .body(.byteBuffer(body)),
          .end(nil),
        ])
    }
  }

  private nonisolated static func requestPath(_ uri: String) -> Substring {
    uri.prefix { $0 != "?" && $0 != "#" }
  }
}
