import EmStatPico
import EmStatPicoClient
import GATT
import Loopback
import MethodScriptFormat
import Synchronization

/// An emulated EmStat Pico and the client over the loopback, in virtual time.
struct EmStatPicoRig {
  let clock = VirtualClock(settleLimit: .milliseconds(500))
  let air: LoopbackAir

  init() { air = LoopbackAir(clock: clock) }

  /// Hosts `model` and returns a client connected to it.
  func connect(_ model: EmStatPico) async throws -> EmStatPicoClient {
    try await air.host(model)
    let client = EmStatPicoClient(link: try air.makeCentral(), clock: clock)
    try await client.connect(timeout: .seconds(5))
    return client
  }

  /// Runs `script` and returns its events, advancing virtual time in steps
  /// of `step` until the stream ends (or `limit` of virtual time has passed);
  /// with `device`, from when its script is running.
  func run(
    _ script: String, on client: EmStatPicoClient, device: EmStatPico? = nil, step: Duration = .milliseconds(100),
    limit: Duration = .seconds(120), during: (@Sendable (Duration) async -> Void)? = nil
  ) async throws -> (events: [MeasurementEvent], error: (any Error)?) {
    try await collect(
      client.sendMethodScript(script), device: device, step: step, limit: limit, during: during)
  }

  /// The events of a script's output `stream`, advancing virtual time as `run` does.
  func collect(
    _ stream: AsyncThrowingStream<MeasurementEvent, any Error>, device: EmStatPico? = nil,
    step: Duration = .milliseconds(100), limit: Duration = .seconds(120),
    during: (@Sendable (Duration) async -> Void)? = nil
  ) async throws -> (events: [MeasurementEvent], error: (any Error)?) {
    let done = Mutex(false)
    let collector = Task {
      var events: [MeasurementEvent] = []
      defer { done.withLock { $0 = true } }
      do {
        for try await event in stream { events.append(event) }
        return (events, nil as (any Error)?)
      } catch {
        return (events, error)
      }
    }
    if let device {
      // Time moves only once the script waits for its first point (a loaded
      // machine may start it late), so `during` sees the device's own time.
      for _ in 0..<5_000 {
        if await device.isRunningScript, clock.sleeperCount > 0 { break }
        try await Task.sleep(for: .milliseconds(1))
      }
    }
    var elapsed = Duration.zero
    while !done.withLock({ $0 }), elapsed < limit {
      await clock.advance(by: step)
      elapsed += step
      await during?(elapsed)
    }
    return await collector.value
  }

  static func packages(_ events: [MeasurementEvent]) -> [MethodScriptPackage] {
    events.compactMap { if case .package(let p) = $0 { p } else { nil } }
  }
}
