import GATT
import Loopback

/// Runs a scenario in process, on a `LoopbackAir` with a `VirtualClock`:
/// hours of device time in seconds, the same device output as on BlueZ for
/// the same seed.
///
/// By default the run has a `LoopbackExecutor` of its own: devices, air,
/// clients and timeline all run on its one thread, and the clock lets each
/// instant settle by the executor's quiet. `shutdown()` ends that thread.
public final class LoopbackTransport: ScenarioTransport {
  public let air: LoopbackAir
  public let virtualClock: VirtualClock
  public var clock: any Clock<Duration> { virtualClock }
  /// The clock's executor: the run executes there.
  public var executor: (any TaskExecutor)? { virtualClock.executor }
  /// The executor this transport made, and shuts down.
  private let ownExecutor: LoopbackExecutor?

  /// A transport with an executor and a clock of its own.
  public init() {
    let executor = LoopbackExecutor()
    virtualClock = VirtualClock(executor: executor)
    air = LoopbackAir(clock: virtualClock)
    ownExecutor = executor
  }

  /// A transport on `clock`, and on its executor if it has one (not shut down here).
  public init(clock: VirtualClock) {
    virtualClock = clock
    air = LoopbackAir(clock: clock)
    ownExecutor = nil
  }

  public func host(_ model: any PeripheralModel, device: DeviceSpec) async throws -> any HostedDevice {
    let id = try await air.host(model, preferredMTU: 247)
    return Hosted(air: air, id: id)
  }

  public func centralLink(for device: DeviceSpec) async throws -> any CentralLink {
    try air.makeCentral(preferredMTU: 247)
  }

  public func run(for duration: Duration?, granularity: Duration, ended: @escaping @Sendable () -> Bool)
    async throws
  {
    let end = duration.map { virtualClock.now.advanced(by: $0) }
    var idle = 0
    while !ended() {
      // Nothing sleeps on the clock: tasks may be busy with work that takes
      // no time (connecting, subscribing). Give them real time to get there
      // before jumping ahead, up to 100 ms, then let time move. On the
      // executor, that work is done once it is quiet; only work from outside
      // it (I/O) is waited for.
      if let executor = virtualClock.executor, virtualClock.nextDeadline == nil {
        await executor.untilQuiet()
      }
      if virtualClock.nextDeadline == nil, idle < 20 {
        idle += 1
        if let executor = virtualClock.executor {
          await executor.untilQuietAfterOutsideWork(deadline: .now.advanced(by: .milliseconds(5)))
        } else {
          try await Task.sleep(for: .milliseconds(5))
        }
        continue
      }
      idle = 0
      if virtualClock.executor != nil {
        // The executor goes from instant to instant by itself, checking `ended` after each.
        let target = end ?? virtualClock.now.advanced(by: granularity)
        guard virtualClock.now < target else { return }
        await virtualClock.advance(to: target, stoppingWhen: ended)
      } else if let end {
        let step = min(granularity, virtualClock.now.duration(to: end))
        guard step > .zero else { return }
        await virtualClock.runUntilIdle(upTo: step)
      } else {
        await virtualClock.runUntilIdle(upTo: granularity)
      }
    }
  }

  public func outsideRunTime<T: Sendable>(_ work: @Sendable () async throws -> T) async throws -> T {
    try await virtualClock.holding(work)
  }

  /// In virtual time nothing is in flight but the jobs of this instant: the
  /// executor runs until it is quiet, and the clock stays where the run ended.
  public func drain(reports: @escaping @Sendable () -> Int) async {
    if let executor = virtualClock.executor { await executor.untilQuiet() }
  }

  public func shutdown() async {
    await air.removeAll()
    ownExecutor?.shutdown()
  }

  struct Hosted: HostedDevice {
    let air: LoopbackAir
    let id: PeripheralID

    func setAdvertising(_ advertising: Bool, advertisement: AdvertisementData?) async throws {
      try await air.setAdvertising(advertising, id, advertisement: advertisement)
    }

    func stop() async { await air.remove(id) }
  }
}
