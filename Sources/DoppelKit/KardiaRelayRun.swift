import BlendMicroClient
import KardiaRelay
import Scenario

/// The Kardia relay for one scenario run (`kardia-relay: true` on a Blend
/// Micro's client): an analysis server in process on an ephemeral port of
/// 127.0.0.1, the relay client connected to it, the client's samples sent
/// through it, and the server's answers reported to the observer: each
/// analysis's heart rate as the metric `relay-heart-rate`, each new abnormal
/// episode in the relay's `ArrhythmiaLog` once as the event
/// `abnormal-episode`, error and unreadable replies as errors.
///
/// Samples are queued (`relay(_:)` never waits for the network, so a
/// loopback run's virtual time is not held up) and sent in order by a task
/// of its own. `finish()` sends what is queued, waits for the answers to it
/// and stops both ends, within a time limit.
final class KardiaRelayRun: Sendable {
  private let server: KardiaAnalysisServer
  private let serving: Task<Void, any Error>
  private let relay: KardiaRelay
  private let queue: AsyncStream<ECGSample>.Continuation
  private let sending: Task<Void, Never>
  private let receiving: Task<Void, Never>

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
    let (samples, queue) = AsyncStream<ECGSample>.makeStream()
    self.queue = queue
    sending = Task {
      do {
        for await sample in samples { try await relay.send(sample) }
      } catch {
        await observer.error("kardia relay: \(error)", device: device)
      }
    }
    receiving = Task {
      var reported = 0
      do {
        for try await reply in relay.replies {
          switch reply {
          case .analysis(let analysis):
            if let rate = analysis.heartRate { await observer.metric("relay-heart-rate", rate, device: device) }
            let entries = await relay.arrhythmiaLog.entries
            while reported < entries.count {
              let rate = entries[reported].heartRate.map { "\(Int($0.rounded())) bpm" } ?? "no rate yet"
              await observer.event("abnormal-episode", device: device, detail: rate)
              reported += 1
            }
          case .error(let message):
            await observer.error("kardia server refused an event: \(message)", device: device)
          case .unreadable(let text):
            await observer.error("kardia server sent an unreadable reply: \(text.prefix(80))", device: device)
          }
        }
      } catch {
        await observer.error("kardia relay: \(error)", device: device)
      }
    }
  }

  /// Queues one sample for the server.
  func relay(_ sample: ECGSample) {
    queue.yield(sample)
  }

  /// Sends what is queued, waits for the server's answers to it, closes the
  /// relay and stops the server; gives up waiting after `limit` (wall time).
  func finish(within limit: Duration = .seconds(10)) async {
    queue.finish()
    let (relay, sending, receiving, serving) = (self.relay, self.sending, self.receiving, self.serving)
    _ = try? await WallTimeLimit.run(limit) {
      await sending.value
      // The server answers every event before it answers the close.
      await relay.close()
      await receiving.value
    }
    sending.cancel()
    await relay.close()
    serving.cancel()
    _ = try? await WallTimeLimit.run(.seconds(2)) { try await serving.value }
  }
}
