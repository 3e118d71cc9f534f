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

/// The Kardia app's relay: every ECG sample from the board goes to the
/// analysis server as `{"amplitude", "time"}` over a WebSocket, the server's
/// answers come back as `replies` (or just `analyses`), and each fresh
/// arrhythmia goes into `arrhythmiaLog` once.
///
/// ```swift
/// let relay = try await KardiaRelay.connect(host: "127.0.0.1", port: port)
/// Task { try await relay.relay(try await client.readings()) }
/// for try await analysis in relay.analyses { … }
/// ```
public actor KardiaRelay {
  private enum Upgrade: Sendable {
    case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
    case refused(NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>)
  }

  /// Every text frame from the server, in order; finishes when the connection
  /// closes (throwing if it failed). One consumer: iterate this or `analyses`.
  public nonisolated let replies: AsyncThrowingStream<KardiaReply, any Error>
  /// The date a sample's time (a `Duration` since the stream started) counts from.
  public nonisolated let epoch: Date
  /// The abnormal episodes so far, updated before each analysis is yielded.
  public private(set) var arrhythmiaLog = ArrhythmiaLog()
  /// The code of the server's close frame, once it sent one (1001 when it shuts down).
  public private(set) var serverCloseCode: Int?

  private let channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>
  private let sink: AsyncThrowingStream<KardiaReply, any Error>.Continuation
  private var writer: NIOAsyncChannelOutboundWriter<WebSocketFrame>?
  private var closing = false
  private var connection: Task<Void, Never>?

  private init(channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, epoch: Date) {
    self.channel = channel
    self.epoch = epoch
    (replies, sink) = AsyncThrowingStream.makeStream()
  }

  /// The server's analyses only (one consumer: iterate this or `replies`).
  public nonisolated var analyses: some AsyncSequence<KardiaAnalysis, any Error> {
    replies.compactMap { @Sendable reply -> KardiaAnalysis? in
      guard case .analysis(let analysis) = reply else { return nil }
      return analysis
    }
  }

  /// Opens the WebSocket to `ws://host:port/path`; a sample's time is sent as
  /// `epoch` plus its `ECGSample.time`. Throws `KardiaError.upgradeRefused` when
  /// the server answers with an HTTP status instead of switching protocols, and
  /// `KardiaError.timedOut` when connecting and upgrading take longer than `timeout`.
  public static func connect(
    host: String, port: Int, path: String = "/ecg", epoch: Date = Date(), timeout: Duration = .seconds(10),
    eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
  ) async throws -> KardiaRelay {
    let deadline = TimeAmount(timeout)
    let (upgrade, expiry): (EventLoopFuture<Upgrade>, Scheduled<Void>) = try await ClientBootstrap(
      group: eventLoopGroup
    )
    .connectTimeout(deadline)
    .connect(host: host, port: port) { channel in
      channel.eventLoop.makeCompletedFuture {
        // However the server behaves, the upgrade (or reading its refusal) ends by the deadline.
        let expiry = channel.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
        return (try configure(channel, host: host, port: port, path: path), expiry)
      }
    }
    let result: Upgrade
    do {
      result = try await upgrade.get()
    } catch {
      throw await Self.expired(expiry) ? KardiaError.timedOut : error
    }
    switch result {
    case .webSocket(let channel):
      expiry.cancel()
      let relay = KardiaRelay(channel: channel, epoch: epoch)
      await relay.start()
      return relay
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

  /// Sends one sample.
  public func send(_ sample: ECGSample) async throws {
    try await sendRaw(event(for: sample))
  }

  /// Sends samples in order, one event (text frame) each, written together
  /// with one flush: how a relay that fell behind catches up without a
  /// system call per sample.
  public func send(contentsOf samples: [ECGSample]) async throws {
    guard let writer, !closing else { throw KardiaError.closed }
    do {
      try await writer.write(contentsOf: samples.map { Self.frame(.text, ByteBuffer(string: event(for: $0))) })
    } catch {
      throw KardiaError.closed
    }
  }

  /// The event text for a sample: its amplitude and its time after `epoch`.
  private func event(for sample: ECGSample) -> String {
    let time = epoch.addingTimeInterval(
      sample.time.seconds)
    return KardiaWire.event(amplitude: sample.amplitude, time: time)
  }

  /// Sends a reading if it is a sample (as the app did, which relayed only
  /// what parsed as a number); returns whether it sent it.
  @discardableResult
  public func send(_ reading: BlendMicroReading) async throws -> Bool {
    guard case .sample(let sample) = reading else { return false }
    try await send(sample)
    return true
  }

  /// Sends every sample of `readings` until they end.
  public func relay<Readings: AsyncSequence>(_ readings: sending Readings) async throws
  where Readings.Element == BlendMicroReading {
    for try await reading in readings {
      try await send(reading)
    }
  }

  /// Sends `text` as one text frame, as it is: for checking how the server
  /// takes events that are not well formed.
  public func sendRaw(_ text: String) async throws {
    guard let writer, !closing else { throw KardiaError.closed }
    do {
      try await writer.write(Self.frame(.text, ByteBuffer(string: text)))
    } catch {
      throw KardiaError.closed
    }
  }

  /// Closes the WebSocket (code 1000) and waits, at most two seconds, for the
  /// server to answer and the connection to end.
  public func close() async {
    if let writer, !closing {
      closing = true
      var code = ByteBuffer()
      code.write(webSocketErrorCode: .normalClosure)
      try? await writer.write(Self.frame(.connectionClose, code))
    }
    let channel = self.channel.channel
    let deadline = channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    await connection?.value
    deadline.cancel()
  }

  // MARK: The connection

  private func start() async {
    await withCheckedContinuation { (ready: CheckedContinuation<Void, Never>) in
      connection = Task { await self.serve(ready: ready) }
    }
  }

  private func serve(ready: CheckedContinuation<Void, Never>) async {
    var isReady = false
    do {
      try await channel.executeThenClose { inbound, outbound in
        writer = outbound
        isReady = true
        ready.resume()
        defer { writer = nil }
        for try await frame in inbound {
          switch frame.opcode {
          case .text:
            let reply = KardiaWire.reply(String(buffer: frame.unmaskedData))
            if case .analysis(let analysis) = reply { arrhythmiaLog.record(analysis) }
            sink.yield(reply)
          case .ping:
            try await outbound.write(Self.frame(.pong, frame.unmaskedData))
          case .connectionClose:
            var data = frame.unmaskedData
            serverCloseCode = data.readInteger(as: UInt16.self).map(Int.init)
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
      sink.finish()
    } catch {
      sink.finish(throwing: error)
    }
    closing = true
    if !isReady { ready.resume() }
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
    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
      configuration: .init(upgradeConfiguration: upgrade))
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
