import BlendMicroClient
import GATT
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The Kardia app's relay, speaking Socket.IO over WebSocket as the app did:
/// every value the board sends is emitted on `message` as
/// `{"amplitude": "<the board's text>", "time": "<ISO 8601>"}` and kept in the
/// 15-point `graph`; the server's `node.js` answers come back as `replies` (or
/// just `analyses`), update what the app's main view shows (`statusCode`,
/// `statusDescription` from the app's dictionary, `heartRateText`), and each
/// fresh arrhythmia goes into `arrhythmiaLog` once; `bleDisconnected()` emits
/// `/BLEDisconnect` and resets the view as the app did.
///
/// ```swift
/// let relay = try await KardiaRelay.connect(host: "127.0.0.1", port: port)
/// Task { try await relay.relay(try await client.readings()) }
/// for try await analysis in relay.analyses { … }
/// ```
public actor KardiaRelay {
  /// How the relay connects again after the server closed the connection or
  /// it failed, as the app's client library did: an attempt at once, then
  /// one every `wait`, `attempts` in all.
  public struct Reconnection: Hashable, Sendable {
    public var attempts: Int
    public var wait: Duration

    public init(attempts: Int, wait: Duration) {
      self.attempts = attempts
      self.wait = wait
    }

    /// The app's library: 10 attempts, 10 s apart.
    public static let app = Reconnection(attempts: 10, wait: .seconds(10))
  }

  private enum Upgrade: Sendable {
    case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
    case refused(NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>)
  }

  /// Where the relay connects, kept for connecting again.
  private struct Endpoint: Sendable {
    var host: String
    var port: Int
    var target: String
    var timeout: Duration
    var eventLoopGroup: any EventLoopGroup
  }

  /// Every event from the server, in order; finishes when the connection
  /// closes (throwing if it failed) and is not connected again. One consumer:
  /// iterate this or `analyses`.
  public nonisolated let replies: AsyncThrowingStream<KardiaReply, any Error>
  /// The date a sample's time (a `Duration` since the stream started) counts from.
  public nonisolated let epoch: Date
  /// The Engine.IO revision the relay speaks.
  public nonisolated let version: EngineIOVersion
  /// The abnormal episodes so far, updated before each analysis is yielded.
  public private(set) var arrhythmiaLog = ArrhythmiaLog()
  /// The last 15 values the board sent, as the app's graph showed them.
  public private(set) var graph = KardiaGraph()
  /// The status code last reported (`"0"` at first and after a BLE disconnect).
  public var statusCode: String { arrhythmiaLog.lastCode }
  /// What the app's status view shows for `statusCode` (its dictionary of codes).
  public var statusDescription: String? { KardiaStatusCode.descriptions[statusCode] }
  /// What the app's BPM view shows: the last heart rate as sent, `"- -"` at
  /// first and after a BLE disconnect.
  public private(set) var heartRateText = KardiaWire.noHeartRate
  /// The server's Engine.IO handshake, once it arrived: its session id and heartbeat.
  public private(set) var handshake: (sid: String, pingInterval: Duration, pingTimeout: Duration)?
  /// How many heartbeats the relay sent: pings with revisions 2 and 3, pongs to the server's pings with 4.
  public private(set) var heartbeats = 0
  /// The code of the server's close frame, once it sent one (1001 when it shuts down).
  public private(set) var serverCloseCode: Int?
  /// The reason in the server's close frame, once it sent one.
  public private(set) var serverCloseReason: String?
  /// How many times the relay connected again (see `Reconnection`).
  public private(set) var reconnections = 0
  /// How many analyses the server sent, all taken into the log and the views.
  public private(set) var analysesTaken = 0

  private var channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>
  private let endpoint: Endpoint
  private let reconnection: Reconnection?
  private let sink: AsyncThrowingStream<KardiaReply, any Error>.Continuation
  private var writer: NIOAsyncChannelOutboundWriter<WebSocketFrame>?
  /// Nothing can be sent: the connection is closing, closed, or not yet connected again.
  private var closing = false
  /// `close()` was called: no reconnecting.
  private var closedByOwner = false
  private var connection: Task<Void, Never>?
  private var heartbeat: Task<Void, Never>?
  /// Callers of ``answersArrived(within:)``, by the number their ping carries.
  private var pongWaiters: [UInt32: CheckedContinuation<Void, any Error>] = [:]
  private var pings: UInt32 = 0

  private init(
    channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, epoch: Date, version: EngineIOVersion,
    endpoint: Endpoint, reconnection: Reconnection?
  ) {
    self.channel = channel
    self.epoch = epoch
    self.version = version
    self.endpoint = endpoint
    self.reconnection = reconnection
    (replies, sink) = AsyncThrowingStream.makeStream()
  }

  /// The server's analyses only (one consumer: iterate this or `replies`).
  public nonisolated var analyses: some AsyncSequence<KardiaAnalysis, any Error> {
    replies.compactMap { @Sendable reply -> KardiaAnalysis? in
      guard case .analysis(let analysis) = reply else { return nil }
      return analysis
    }
  }

  /// Opens the Socket.IO connection to `ws://host:port/path?EIO=<version>&transport=websocket`
  /// (by default as the app did: Engine.IO revision 2, straight to WebSocket);
  /// a sample's time is sent as `epoch` plus its `ECGSample.time`. Throws
  /// `KardiaError.upgradeRefused` when the server answers with an HTTP status
  /// instead of switching protocols, and `KardiaError.timedOut` when connecting
  /// and upgrading take longer than `timeout`. With a `reconnection` (the
  /// app's library had `.app`), a connection the server closes or that fails
  /// is opened again; in between, sending throws `KardiaError.closed`.
  public static func connect(
    host: String, port: Int, path: String = "/socket.io/", version: EngineIOVersion = .two, epoch: Date = Date(),
    timeout: Duration = .seconds(10), reconnection: Reconnection? = nil,
    eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
  ) async throws -> KardiaRelay {
    let target = "\(path)\(path.contains("?") ? "&" : "?")EIO=\(version.rawValue)&transport=websocket"
    let endpoint = Endpoint(host: host, port: port, target: target, timeout: timeout, eventLoopGroup: eventLoopGroup)
    let channel = try await open(endpoint)
    let relay = KardiaRelay(
      channel: channel, epoch: epoch, version: version, endpoint: endpoint, reconnection: reconnection)
    await relay.start()
    return relay
  }

  /// Connects and upgrades to a WebSocket.
  private static func open(_ endpoint: Endpoint) async throws -> NIOAsyncChannel<WebSocketFrame, WebSocketFrame> {
    let deadline = TimeAmount(endpoint.timeout)
    let (host, port, target) = (endpoint.host, endpoint.port, endpoint.target)
    let (upgrade, expiry): (EventLoopFuture<Upgrade>, Scheduled<Void>) = try await ClientBootstrap(
      group: endpoint.eventLoopGroup
    )
    .connectTimeout(deadline)
    .connect(host: host, port: port) { channel in
      channel.eventLoop.makeCompletedFuture {
        // However the server behaves, the upgrade (or reading its refusal) ends by the deadline.
        let expiry = channel.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
        return (try configure(channel, host: host, port: port, path: target), expiry)
      }
    }
    let result: Upgrade
    do {
      result = try await upgrade.get()
    } catch {
      throw await expired(expiry) ? KardiaError.timedOut : error
    }
    switch result {
    case .webSocket(let channel):
      expiry.cancel()
      return channel
    case .refused(let channel):
      defer { expiry.cancel() }
      let status: Int
      do {
        status = try await Self.status(of: channel)
      } catch {
        throw await Self.expired(expiry) ? KardiaError.timedOut : error
      }
      throw KardiaError.upgradeRefused(status: status)
    }
  }

  /// Whether `expiry` ran (it is cancelled if not).
  private static func expired(_ expiry: Scheduled<Void>) async -> Bool {
    expiry.cancel()
    return (try? await expiry.futureResult.get()) != nil
  }

  /// Sends one sample: emits `message` and adds it to the graph.
  public func send(_ sample: ECGSample) async throws {
    try await send(contentsOf: [sample])
  }

  /// Sends samples in order, one `message` event (text frame) each, written
  /// together with one flush: how a relay that fell behind catches up without
  /// a system call per sample.
  public func send(contentsOf samples: [ECGSample]) async throws {
    try await emit(samples.map { ($0.text ?? String($0.amplitude), $0.time) })
  }

  /// Sends a reading as the app did, the notification's text whether it is a
  /// number or not (the server answers one that is not with `/error`);
  /// returns whether it sent it. A notification that is not UTF-8 (on which
  /// the app stopped: it force-unwrapped the decoded string) is not sent.
  @discardableResult
  public func send(_ reading: BlendMicroReading) async throws -> Bool {
    switch reading {
    case .sample(let sample):
      try await send(sample)
    case .malformed(let bytes, let time):
      guard let text = String(validating: bytes, as: UTF8.self) else { return false }
      try await emit([(text, time)])
    }
    return true
  }

  /// Emits `message` for each value (the board's text, and when it arrived)
  /// and adds it to the graph.
  private func emit(_ values: [(text: String, time: Duration)]) async throws {
    let frames = values.map { value in
      graph.append(value.text)
      return KardiaWire.sample(amplitude: value.text, time: epoch.addingTimeInterval(value.time.seconds))
    }
    try await write(frames)
  }

  /// Sends every sample of `readings` until they end.
  public func relay<Readings: AsyncSequence>(_ readings: sending Readings) async throws
  where Readings.Element == BlendMicroReading {
    for try await reading in readings {
      try await send(reading)
    }
  }

  /// The board disconnected: emits `/BLEDisconnect` and, as the app did, shows
  /// status `"0"` (`N/A`) and heart rate `"- -"` until the next analysis.
  public func bleDisconnected() async throws {
    arrhythmiaLog.bleDisconnected()
    heartRateText = KardiaWire.noHeartRate
    try await write([EngineIOPacket.message(SocketIOPacket.event(KardiaWire.disconnectEvent).text).text])
  }

  /// Returns once the server has answered what was sent before the call and
  /// its answers have been taken in: sends a WebSocket ping and waits for its
  /// pong, which a server that reads its frames in order (the analysis
  /// server; a Socket.IO server on `ws`) sends after answering the frames
  /// before it. Throws `KardiaError.closed` when the connection ends first
  /// or the pong has not come within `limit` (wall time).
  ///
  /// The app sent its events as the board streamed, so the answers to
  /// seconds-old samples had arrived when the board's link dropped; a run on
  /// virtual time relays seconds of samples at once, and waits here before
  /// `bleDisconnected()` so that its reset meets the answers in that order.
  public func answersArrived(within limit: Duration = .seconds(10)) async throws {
    guard let writer, !closing else { throw KardiaError.closed }
    pings &+= 1
    let number = pings
    let channel = self.channel.channel
    let expiry = channel.eventLoop.scheduleTask(in: TimeAmount(limit)) {}
    let expired = Task { [weak self] in
      if (try? await expiry.futureResult.get()) != nil { await self?.pong(number, failing: KardiaError.closed) }
    }
    defer {
      expiry.cancel()
      expired.cancel()
    }
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
      pongWaiters[number] = continuation
      Task {
        do {
          try await writer.write(Self.frame(.ping, ByteBuffer(integer: number)))
        } catch {
          self.pong(number, failing: KardiaError.closed)
        }
      }
    }
  }

  /// Resumes the caller waiting for ping `number`: with `failing` as its
  /// error when given.
  private func pong(_ number: UInt32, failing error: (any Error)? = nil) {
    guard let waiter = pongWaiters.removeValue(forKey: number) else { return }
    if let error { waiter.resume(throwing: error) } else { waiter.resume() }
  }

  /// Sends `text` as one text frame, as it is: for checking how the server
  /// takes frames that are not well formed.
  public func sendRaw(_ text: String) async throws {
    try await write([text])
  }

  /// Sends `bytes` as one binary frame.
  public func sendBinary(_ bytes: [UInt8]) async throws {
    guard let writer, !closing else { throw KardiaError.closed }
    do {
      try await writer.write(Self.frame(.binary, ByteBuffer(bytes: bytes)))
    } catch {
      throw KardiaError.closed
    }
  }

  private func write(_ texts: [String]) async throws {
    guard let writer, !closing else { throw KardiaError.closed }
    do {
      try await writer.write(contentsOf: texts.map { Self.frame(.text, ByteBuffer(string: $0)) })
    } catch {
      throw KardiaError.closed
    }
  }

  /// Closes the WebSocket (code 1000) and waits, at most `limit` (wall time;
  /// two seconds unless given), for the server to answer and the connection
  /// to end; after that the connection is cut, and answers the server had not
  /// sent yet are lost (`serverCloseCode` stays `nil`).
  public func close(within limit: Duration = .seconds(2)) async {
    closedByOwner = true
    heartbeat?.cancel()
    if writer == nil {
      // Between connections: stop waiting to connect again.
      connection?.cancel()
    }
    if let writer, !closing {
      closing = true
      var code = ByteBuffer()
      code.write(webSocketErrorCode: .normalClosure)
      try? await writer.write(Self.frame(.connectionClose, code))
    }
    let channel = self.channel.channel
    let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(limit)) { channel.close(promise: nil) }
    await connection?.value
    deadline.cancel()
  }

  // MARK: The connection

  private func start() async {
    await withCheckedContinuation { (ready: CheckedContinuation<Void, Never>) in
      connection = Task { await self.run(ready: ready) }
    }
  }

  /// Serves the connection, and with a `reconnection` each new one, until
  /// none is left; then `replies` ends.
  private func run(ready: CheckedContinuation<Void, Never>) async {
    var failure = await serve(ready: ready)
    connecting: while let reconnection, !closedByOwner {
      for attempt in 1...max(1, reconnection.attempts) {
        if attempt > 1 {
          do {
            try await Task.sleep(for: reconnection.wait)
          } catch {
            break connecting
          }
        }
        guard !closedByOwner else { break connecting }
        guard let next = try? await Self.open(endpoint) else { continue }
        guard !closedByOwner else {
          try? await next.channel.close()
          break connecting
        }
        channel = next
        reconnections += 1
        closing = false
        failure = await serve(ready: nil)
        continue connecting
      }
      break
    }
    if let failure { sink.finish(throwing: failure) } else { sink.finish() }
  }

  /// Serves one connection until it closes; returns why it failed, if it did.
  private func serve(ready: CheckedContinuation<Void, Never>?) async -> (any Error)? {
    var isReady = false
    var failure: (any Error)?
    do {
      try await channel.executeThenClose { inbound, outbound in
        writer = outbound
        isReady = true
        if version.serverPings {
          // Revision 4: the client asks for the main namespace.
          try await outbound.write(
            Self.frame(.text, ByteBuffer(string: EngineIOPacket.message(SocketIOPacket(kind: .connect).text).text)))
        }
        ready?.resume()
        defer { writer = nil }
        for try await frame in inbound {
          switch frame.opcode {
          case .text:
            try await receive(String(buffer: frame.unmaskedData), outbound: outbound)
          case .binary:
            sink.yield(.unreadable("a binary frame of \(frame.unmaskedData.readableBytes) bytes"))
          case .ping:
            try await outbound.write(Self.frame(.pong, frame.unmaskedData))
          case .pong:
            var data = frame.unmaskedData
            if let number = data.readInteger(as: UInt32.self) { pong(number) }
          case .connectionClose:
            var data = frame.unmaskedData
            serverCloseCode = data.readInteger(as: UInt16.self).map(Int.init)
            serverCloseReason = data.readString(length: data.readableBytes)
            if !closing {
              // Answer the server's close with its code, then let the channel close
              // (the server may have closed it already: that is no failure).
              closing = true
              let code = ByteBuffer(integer: UInt16(serverCloseCode ?? 1000))
              try? await outbound.write(Self.frame(.connectionClose, code))
            }
            return
          default:
            break
          }
        }
      }
    } catch {
      failure = error
    }
    heartbeat?.cancel()
    closing = true
    for number in Array(pongWaiters.keys) { pong(number, failing: KardiaError.closed) }
    if !isReady { ready?.resume() }
    return failure
  }

  /// One Engine.IO packet from the server.
  private func receive(_ text: String, outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>) async throws {
    guard let packet = try? EngineIOPacket(text: text) else {
      sink.yield(.unreadable(text))
      return
    }
    switch packet {
    case .open(let data):
      guard case .object(let fields)? = JSONValue.parse(Substring(data)), case .string(let sid)? = fields["sid"],
        case .number(let interval)? = fields["pingInterval"], case .number(let timeout)? = fields["pingTimeout"]
      else {
        sink.yield(.unreadable(text))
        return
      }
      handshake = (sid, .milliseconds(Int64(interval)), .milliseconds(Int64(timeout)))
      if !version.serverPings { startHeartbeat(every: .milliseconds(Int64(interval))) }
    case .ping(let data):
      try await outbound.write(Self.frame(.text, ByteBuffer(string: EngineIOPacket.pong(data).text)))
      heartbeats += 1
    case .message(let data):
      if data.first == "2", let analysis = KardiaWire.quickAnalysis(data.dropFirst()) {
        record(analysis)
        return
      }
      guard let message = try? SocketIOPacket(text: data) else {
        sink.yield(.unreadable(text))
        return
      }
      switch message.kind {
      case .connect:
        break
      case .event:
        let reply = KardiaWire.reply(message)
        if case .analysis(let analysis) = reply {
          record(analysis)
        } else {
          sink.yield(reply)
        }
      default:
        sink.yield(.unreadable(text))
      }
    case .pong, .noop:
      break
    case .close, .upgrade:
      sink.yield(.unreadable(text))
    }
  }

  private func ping() async throws {
    try await write([EngineIOPacket.ping("").text])
    heartbeats += 1
  }

  /// Takes an analysis in, as the app did (its log, its views), and passes it on.
  private func record(_ analysis: KardiaAnalysis) {
    analysesTaken += 1
    arrhythmiaLog.record(analysis)
    heartRateText = analysis.heartRateText
    sink.yield(.analysis(analysis))
  }

  /// Revisions 2 and 3: the client pings every `interval`, as the app's client did.
  private func startHeartbeat(every interval: Duration) {
    heartbeat?.cancel()
    heartbeat = Task { [weak self] in
      while !Task.isCancelled {
        do {
          try await Task.sleep(for: max(interval, .milliseconds(10)))
          try await self?.ping()
        } catch {
          return
        }
      }
    }
  }

  /// A frame from the client: masked, as RFC 6455 requires.
  private static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
    WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
  }

  private static func configure(_ channel: any Channel, host: String, port: Int, path: String) throws
    -> EventLoopFuture<Upgrade>
  {
    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
      upgradePipelineHandler: { channel, _ in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(
            NIOWebSocketFrameAggregator(
              minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: 1 << 16))
          return .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
        }
      }
    )
    var headers = HTTPHeaders()
    headers.add(name: "Host", value: "\(host):\(port)")
    headers.add(name: "Content-Length", value: "0")
    let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
    let upgrade = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
      upgradeRequestHead: request,
      upgraders: [upgrader],
      notUpgradingCompletionHandler: { channel in
        channel.eventLoop.makeCompletedFuture { .refused(try NIOAsyncChannel(wrappingChannelSynchronously: channel)) }
      }
    )
    var configuration = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: upgrade)
    // Engine.IO's open packet follows the 101 at once, often in the same read:
    // the bytes after the response are frames, not to be dropped.
    configuration.leftOverBytesStrategy = .forwardBytes
    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: configuration)
  }

  /// The status of the response that refused the upgrade.
  private static func status(of channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>) async throws
    -> Int
  {
    try await channel.executeThenClose { inbound, _ in
      for try await part in inbound {
        if case .head(let response) = part { return Int(response.status.code) }
      }
      throw KardiaError.closed
    }
  }
}
