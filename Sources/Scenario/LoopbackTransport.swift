import GATT

/// Runs a scenario in process, on a `LoopbackAir` with a `VirtualClock`:
/// hours of device time in seconds, the same device output as on BlueZ for
/// the same seed.
public final class LoopbackTransport: ScenarioTransport {
  public let air: LoopbackAir
  public let virtualClock: VirtualClock
  public var clock: any Clock<Duration> { virtualClock }

  public init(clock: VirtualClock = VirtualClock()) {
    virtualClock = clock
    air = LoopbackAir(clock: clock)
  }

  public func host(_ model: any PeripheralModel, device: DeviceSpec) async throws -> any HostedDevice {
    let id = try await air.host(model, preferredMTU: 247)
    return Hosted(air: air, id: id)
  }

  public func centralLink(for device: DeviceSpec) async throws -> any CentralLink {
    try air.makeCentral(preferredMTU: 247)
  }

  public func run(for duration: Duration?, granularity: Duration, ended: @escaping @Sendable () async -> Bool)
    async throws
  {
    let end = duration.map { virtualClock.now.advanced(by: $0) }
    var idle = 0
    while await !ended() {
      // Nothing sleeps on the clock: tasks may be busy with work that takes
      // no time (connecting, subscribing). Give them real time to get there
      // before jumping ahead, up to 100 ms, then let time move.
      if virtualClock.nextDeadline == nil, idle < 20 {
        idle += 1
        try await Task.sleep(for: .milliseconds(5))
        continue
      }
      idle = 0
      if let end {
        let step = min(granularity, virtualClock.now.duration(to: end))
        guard step > .zero else { return }
        await virtualClock.runUntilIdle(upTo: step)
      } else {
        await virtualClock.runUntilIdle(upTo: granularity)
      }
    }
  }

  public func shutdown() async {
    await air.removeAll()
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
