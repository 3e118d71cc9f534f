import GATT
import Loopback
import Synchronization

/// A host that counts how a model sends, for tests of a model's sending
/// path: each `notifyAtOnce` that sent, each awaited `notify`, each
/// `notificationsTaken()`. With `sendsAtOnce` it sends every value within
/// the call and in order, as the loopback does; without, it declines
/// `notifyAtOnce` and keeps no order, as BlueZ's does when a
/// characteristic's socket is not in use. One central, `central`, is
/// connected and subscribed to everything, with an MTU of 247.
public final class CountingHost: PeripheralHost {
  private let counts = Mutex((atOnce: 0, awaited: 0, waits: 0))
  public let clock: any Clock<Duration>
  public let sendsAtOnce: Bool
  public static let central = CentralID("central")

  public init(clock: any Clock<Duration>, sendsAtOnce: Bool) {
    self.clock = clock
    self.sendsAtOnce = sendsAtOnce
  }

  /// Values `notifyAtOnce` sent.
  public var atOnce: Int { counts.withLock { $0.atOnce } }
  /// Values the model awaited `notify` for.
  public var awaited: Int { counts.withLock { $0.awaited } }
  /// Calls of `notificationsTaken()`.
  public var waits: Int { counts.withLock { $0.waits } }

  public func notifyAtOnce(_ value: [UInt8], characteristic: CharacteristicAddress) throws(GATTError) -> Bool {
    guard sendsAtOnce else { return false }
    counts.withLock { $0.atOnce += 1 }
    return true
  }
  public var deliversInOrder: Bool { sendsAtOnce }

  nonisolated(nonsending) public func notify(_ value: [UInt8], characteristic: CharacteristicAddress)
    async throws(GATTError)
  {
    counts.withLock { $0.awaited += 1 }
  }
  nonisolated(nonsending) public func indicate(_ value: [UInt8], characteristic: CharacteristicAddress)
    async throws(GATTError)
  {}
  public func subscribers(of characteristic: CharacteristicAddress) async -> [CentralID] { [Self.central] }
  public var connectedCentrals: [CentralID] { get async { [Self.central] } }
  public func mtu(for central: CentralID) async -> Int? { 247 }
  public func disconnect(_ central: CentralID) async {}
  public func setAdvertisingEnabled(_ enabled: Bool) async {}
  nonisolated(nonsending) public func notificationsTaken() async { counts.withLock { $0.waits += 1 } }

  /// Hosts `model` on a counting host on the loopback's executor and
  /// virtual clock: starts it, connects ``central``, runs `begin` (what
  /// makes the model stream), lets `duration` of virtual time pass and
  /// stops it. Returns the host, with its counts.
  public static func stream<Model: PeripheralModel>(
    _ model: Model, sendingAtOnce: Bool, for duration: Duration,
    after begin: @Sendable (Model) async throws -> Void
  ) async throws -> CountingHost {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let clock = VirtualClock(executor: executor)
    let host = CountingHost(clock: clock, sendsAtOnce: sendingAtOnce)
    try await withTaskExecutorPreference(executor) {
      await model.start(host: host)
      await model.centralConnected(central)
      try await begin(model)
      await clock.advance(by: duration)
      await model.stop()
    }
    return host
  }
}
