import BlendMicroClient
import KardiaRelay
import Scenario
import Synchronization

/// The Kardia relay for one scenario run (`kardia-relay: true` on a Blend
/// Micro's client): an analysis server in process on an ephemeral port of
/// 127.0.0.1, the relay client connected to it, the client's samples sent
/// through it, and the server's answers reported to the observer: each
/// analysis's heart rate as the metric `relay-heart-rate`, each new abnormal
/// episode in the relay's `ArrhythmiaLog` once as the event
/// `abnormal-episode`, error and unreadable replies as errors, and at the
/// end the app's screen after the last analysis as a drawing (`KardiaScreen`)
/// for the report and the
/// number of `/BLEDisconnect` events the server heard as the metric
/// `relay-ble-disconnects-heard`.
///
/// The BLE link dropping is relayed as the app relayed it, `/BLEDisconnect`,
/// in order with the samples.
///
/// Samples are queued (`relay(_:)` never waits for the network, so a
/// loopback run's virtual time is not held up) and sent in order by a task
/// of its own, everything queued at once when it fell behind (one write for
/// the lot: on a loaded machine a write per sample is what makes it fall
/// further behind). `finish()` sends what is queued, waits for the answers to it
/// and stops both ends, within a time limit.
final class KardiaRelayRun: Sendable {
  private let server: KardiaAnalysisServer
  private let serving: Task<Void, any Error>
  private let relay: KardiaRelay
  /// Samples not yet sent.
  private let pending = PendingSamples()
  /// Wakes the sending task when `pending` has samples.
  private let queue: AsyncStream<Void>.Continuation
  private let sending: Task<Void, Never>
  private let receiving: Task<Void, Never>
  private let observer: ClientObserver
  private let device: String
  /// The app's screen after the last analysis: what it showed while the
  /// board streamed (the end of the run's link resets it, as in the app).
  private let lastScreen = LatestScreen()

  /// Starts the server, connects the relay and starts reporting for `device`;
  /// throws if either end cannot be set up within `timeout` (the server is
  /// stopped again then).
  static func start(device: String, observer: ClientObserver, timeout: Duration = .seconds(10)) async throws
    -> KardiaRelayRun
  {
    let server = KardiaAnalysisServer(configuration: .init(host: "127.0.0.1", port: 0))
    let serving = Task { try await server.run() }
    do {
      let port = try await WallTimeLimit.run(timeout) { try await server.listeningPort() }
      let relay = try await KardiaRelay.connect(host: "127.0.0.1", port: port, timeout: timeout)
      return KardiaRelayRun(server: server, serving: serving, relay: relay, device: device, observer: observer)
    } catch {
      serving.cancel()
      _ = try? await WallTimeLimit.run(.seconds(2)) { try await serving.value }
      throw error
    }
  }

  private init(
    server: KardiaAnalysisServer, serving: Task<Void, any Error>, relay: KardiaRelay, device: String,
    observer: ClientObserver
  ) {
    self.server = server
    self.serving = serving
    self.relay = relay
    self.observer = observer
    self.device = device
    let (wakes, queue) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    self.queue = queue
    let pending = self.pending
    let lastScreen = self.lastScreen
    let relayFailed = self.relayFailed
    sending = Task {
      do {
        // One wake-up may stand for many samples; after the last, what is left.
        for await _ in wakes {
          try await Self.send(pending.take(), through: relay)
        }
        try await Self.send(pending.take(), through: relay)
      } catch {
        relayFailed.value = true
        observer.error("kardia relay: \(error)", device: device)
      }
    }
    receiving = Task {
      var reported = 0
      do {
        for try await reply in relay.replies {
          switch reply {
          case .analysis(let analysis):
            if let rate = analysis.heartRate { observer.metric("relay-heart-rate", rate, device: device) }
            let screen = await relay.screen
            lastScreen.screen = screen
            let entries = screen.episodes
            while reported < entries.count {
              let rate = entries[reported].heartRate.map { "\(Int($0.rounded())) bpm" } ?? "no rate yet"
              observer.event("abnormal-episode", device: device, detail: rate)
              reported += 1
            }
          case .error(let message):
            observer.error("kardia server refused an event: \(message)", device: device)
          case .unreadable(let text):
            observer.error("kardia server sent an unreadable reply: \(text.prefix(80))", device: device)
          }
        }
      } catch {
        relayFailed.value = true
        observer.error("kardia relay: \(error)", device: device)
      }
    }
  }

  /// Whether sending to the server or reading its replies failed (and was reported).
  private let relayFailed = FailureFlag()

  /// Queues one sample for the server.
  func relay(_ sample: ECGSample) {
    pending.append(.sample(sample))
    queue.yield()
  }

  /// Queues `/BLEDisconnect`: the board's link dropped.
  func bleDisconnected() {
    pending.append(.bleDisconnect)
    queue.yield()
  }

  /// Sends queued items in order, runs of samples in one write each.
  private static func send(_ items: [PendingSamples.Item], through relay: KardiaRelay) async throws {
    var samples: [ECGSample] = []
    for item in items {
      switch item {
      case .sample(let sample):
        samples.append(sample)
      case .bleDisconnect:
        if !samples.isEmpty { try await relay.send(contentsOf: samples) }
        samples.removeAll()
        // The answers to what was sent first, as in real time: in the
        // loopback they all came after the disconnect's reset, and a reset
        // amid an arrhythmia's answers made it two episodes (5 runs of 20).
        // Past the limit the disconnect goes all the same.
        try? await relay.answersArrived(within: .seconds(10))
        try await relay.bleDisconnected()
      }
    }
    if !samples.isEmpty { try await relay.send(contentsOf: samples) }
  }

  /// Sends what is queued, waits for the server's answers to it, closes the
  /// relay and stops the server; gives up waiting after `limit` (wall time),
  /// and says so as an error. In the loopback a run's samples arrive in
  /// seconds of wall time and the server analyses them all after, which on a
  /// loaded machine with a debug build took more than 10 s.
  func finish(within limit: Duration = .seconds(60)) async {
    queue.finish()
    let (relay, sending, receiving, serving) = (self.relay, self.sending, self.receiving, self.serving)
    do {
      let start = ContinuousClock.now
      try await WallTimeLimit.run(limit) {
        await sending.value
        // The server answers every event before it answers the close: wait
        // for that answer as long as the limit allows (a loaded machine gave
        // the server more to analyse than two seconds, the relay's own
        // wait, allow), not the app's two seconds.
        // A second before the limit: an answer that never comes is told
        // apart from replies that do not end (the limit's error, below).
        await relay.close(within: max(.zero, limit - .seconds(1) - (ContinuousClock.now - start)))
        await receiving.value
      }
      // Unanswered, with the connection up until then (a connection already
      // lost was reported by the task reading the replies).
      if await relay.serverCloseCode == nil, !relayFailed.value {
        observer.error(
          "kardia relay: the server did not answer the close within \(limit) (wall time); answers to what was relayed may be missing",
          device: device)
      }
    } catch {
      observer.error(
        "kardia relay: the server's answers to what was relayed did not all arrive within \(limit) (wall time)",
        device: device)
    }
    sending.cancel()
    await relay.close()
    let fallback = await relay.screen
    let screen = lastScreen.screen ?? fallback
    observer.drawing("Kardia app", svg: screen.svg, device: device)
    observer.metric("relay-ble-disconnects-heard", Double(server.bleDisconnectsHeard), device: device)
    serving.cancel()
    _ = try? await WallTimeLimit.run(.seconds(2)) { try await serving.value }
  }
}

/// The samples (and BLE disconnects) queued for the relay, shared by the
/// client that adds them and the task that sends them.
private final class PendingSamples: Sendable {
  enum Item: Sendable {
    case sample(ECGSample)
    case bleDisconnect
  }

  private let samples = Mutex<[Item]>([])

  func append(_ item: Item) { samples.withLock { $0.append(item) } }

  /// Everything queued, in order, leaving the queue empty.
  func take() -> [Item] {
    samples.withLock { queued in
      defer { queued.removeAll(keepingCapacity: true) }
      return queued
    }
  }
}

/// The app's screen after the last analysis, set by the task that reads the
/// server's answers and read when the run ends.
private final class LatestScreen: Sendable {
  private let latest = Mutex<KardiaScreen?>(nil)

  var screen: KardiaScreen? {
    get { latest.withLock { $0 } }
    set { latest.withLock { $0 = newValue } }
  }
}

/// Set by the relay's tasks when sending or reading failed.
private final class FailureFlag: Sendable {
  private let failed = Mutex(false)

  var value: Bool {
    get { failed.withLock { $0 } }
    set { failed.withLock { $0 = newValue } }
  }
}
