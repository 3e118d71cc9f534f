import GATT
import Loopback
import Muse
import Synchronization
import Testing

/// A headband on the loopback in virtual time, and a bare central on it;
/// with an executor, everything run in `run(_:)` runs on the loopback's
/// thread and each instant settles when that thread is quiet.
struct MuseRig {
  let clock: VirtualClock
  let air: LoopbackAir
  let executor: LoopbackExecutor?

  init(executor: Bool = false) {
    let loopback = executor ? LoopbackExecutor() : nil
    self.executor = loopback
    clock = loopback.map { VirtualClock(executor: $0) } ?? VirtualClock(settleLimit: .milliseconds(500))
    air = LoopbackAir(clock: clock)
  }

  /// Runs `body` on the rig's executor (if it has one), then shuts the executor down.
  func run(_ body: () async throws -> Void) async throws {
    defer { executor?.shutdown() }
    try await withTaskExecutorPreference(executor) { try await body() }
  }

  /// Hosts `headband` and connects a central to it.
  func connect(_ headband: MuseHeadband) async throws -> any CentralConnection {
    let id = try await air.host(headband)
    return try await air.makeCentral().connect(id, timeout: .seconds(5))
  }

  /// Collects a notification stream until it ends.
  static func collect(_ stream: NotificationStream) -> Task<[[UInt8]], Never> {
    Task {
      var values: [[UInt8]] = []
      do {
        for try await value in stream { values.append(value) }
      } catch {}
      return values
    }
  }

  /// The control answers that arrive while `body` runs and the clock moves on a little.
  func answers(_ connection: any CentralConnection, to commands: [String]) async throws -> [String] {
    let texts = Mutex<[String]>([])
    let stream = try await connection.notifications(of: MuseHeadband.control)
    let reader = Task {
      var current = ""
      do {
        for try await packet in stream {
          let count = Int(packet[0])
          current += String(decoding: packet[1..<(1 + count)], as: UTF8.self)
          if current.hasSuffix("}") {
            let done = current
            texts.withLock { $0.append(done) }
            current = ""
          }
        }
      } catch {}
    }
    for command in commands {
      try await connection.write(MuseCommand.frame(command), to: MuseHeadband.control, type: .withResponse)
    }
    await clock.advance(by: .milliseconds(10))
    reader.cancel()
    return texts.withLock { $0 }
  }
}
