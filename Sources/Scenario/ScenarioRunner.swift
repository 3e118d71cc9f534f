import Foundation
import GATT
import Logging
import Signals
import Synchronization

/// Runs a scenario on a transport: hosts its devices with their faults,
/// plays its timeline, and in end-to-end runs drives each device's client
/// stack and checks the expectations.
public struct ScenarioRunner: Sendable {
  /// What a run does.
  public enum Mode: Sendable {
    /// Host the devices and play the timeline (`doppel run`).
    case host
    /// Also run each device's client and check the expectations (`doppel e2e`).
    case endToEnd
    /// Host the devices and play the timeline for a central Doppel does not
    /// run (`doppel test`), and check the device-side expectations.
    case external
  }

  /// A hosted device, as a run tells whoever drives an outside central about it.
  public struct HostedDeviceInfo: Sendable {
    public var id: String
    public var model: String
    /// The name it advertises.
    public var name: String
    public var spec: DeviceSpec
  }

  public let scenario: Scenario
  /// Binding types by model name.
  public let bindings: [String: any DeviceBinding.Type]
  /// Receives a line for each notable thing that happens.
  public let progress: @Sendable (String) -> Void

  public init(
    scenario: Scenario, bindings: [any DeviceBinding.Type], progress: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.scenario = scenario
    self.bindings = Dictionary(bindings.map { ($0.description.model, $0) }, uniquingKeysWith: { first, _ in first })
    self.progress = progress
  }

  /// A device of the run: its binding, the faults, the hosted peripheral.
  private struct Running: Sendable {
    let spec: DeviceSpec
    let binding: any DeviceBinding
    let peripheral: ScenarioPeripheral
    let hosted: any HostedDevice
  }

  /// Runs the scenario. Devices are all built before anything is hosted, so a
  /// scenario whose recordings cannot be read fails before it starts; the
  /// transport is shut down however the run ends. The run, and every task it
  /// starts, prefers the transport's executor (the loopback's own thread).
  ///
  /// - Parameters:
  ///   - hosted: called once every device is hosted and advertising as the
  ///     scenario says, before the timeline starts (`doppel test` starts its
  ///     command there).
  ///   - stopWhen: checked as time passes; the run ends early when it is true
  ///     (the outside central exited).
  ///   - window: the longest the run may last. A scenario that would run
  ///     longer is cut there, and its expectations are held to what a window
  ///     can show: counts are not checked (the report says which), rates,
  ///     values, gaps, metrics and errors are. For CI, where a long scenario
  ///     runs whole in the loopback and a window of it over a real stack.
  public func run(
    on transport: any ScenarioTransport, mode: Mode,
    hosted: @escaping @Sendable ([HostedDeviceInfo]) async throws -> Void = { _ in },
    stopWhen: @escaping @Sendable () -> Bool = { false },
    window: Duration? = nil
  ) async throws -> ScenarioReport {
    try await withTaskExecutorPreference(transport.executor) {
      try await runPreferring(transport, mode: mode, hosted: hosted, stopWhen: stopWhen, window: window)
    }
  }

  private func runPreferring(
    _ transport: any ScenarioTransport, mode: Mode,
    hosted onHosted: @escaping @Sendable ([HostedDeviceInfo]) async throws -> Void,
    stopWhen: @escaping @Sendable () -> Bool, window: Duration?
  ) async throws -> ScenarioReport {
    let wallStart = ContinuousClock.now
    Logger.scenario.info(
      "run starts", metadata: ["scenario": "\(scenario.name)", "file": "\(scenario.file)", "mode": "\(mode)"])
    let signals = SignalFactory(scenario: scenario)
    var bound: [(DeviceSpec, any DeviceBinding)] = []
    for device in scenario.devices {
      guard let type = bindings[device.model] else {
        throw ScenarioError(
          .unknownModel, file: scenario.file, line: device.location.line, column: device.location.column,
          "no device model '\(device.model)' in this build")
      }
      bound.append((device, try type.init(device: device, signals: signals)))
    }
    if mode != .host, scenario.duration == nil, !scenario.timeline.contains(where: { $0.action == .end }) {
      throw ScenarioError(
        .missingKey, file: scenario.file, line: 1, column: 1,
        "\(mode == .endToEnd ? "an end-to-end run" : "a test") needs an end: give the scenario a 'duration' or an 'end' event"
      )
    }

    let clock = transport.clock
    let stopwatch = Stopwatch(clock)
    var running: [Running] = []
    let ended = EndFlag()
    var tasks: [Task<Void, Never>] = []
    let fired = FiredLog()
    let observer = ClientObserver(clock: clock, progress: progress)
    do {
      // Listen for the events `after:` triggers wait on before anything is
      // hosted, so none is missed.
      var peripherals: [String: ScenarioPeripheral] = [:]
      var deviceEvents: [Int: AsyncStream<DeviceEventFeed.Event>] = [:]
      let seconds = { @Sendable in stopwatch().seconds }
      for (spec, binding) in bound {
        peripherals[spec.id] = ScenarioPeripheral(
          model: binding.model, faults: FaultPlan(), activity: CentralActivityRecorder(elapsed: seconds))
      }
      for (index, event) in scenario.timeline.enumerated() {
        if case .after(_, let device, _, _, _) = event.trigger, let peripheral = peripherals[device] {
          deviceEvents[index] = peripheral.events.events()
        }
      }
      for (spec, binding) in bound {
        guard let peripheral = peripherals[spec.id] else { continue }
        let hosted = try await transport.host(peripheral, device: spec)
        if !spec.advertisesAtStart { try await hosted.setAdvertising(false, advertisement: nil) }
        running.append(Running(spec: spec, binding: binding, peripheral: peripheral, hosted: hosted))
        progress(
          "device \(spec.id): \(spec.model) '\(binding.model.advertisement.localName ?? "")'\(spec.advertisesAtStart ? "" : " (not advertising yet)")"
        )
      }
      try await onHosted(
        running.map {
          HostedDeviceInfo(
            id: $0.spec.id, model: $0.spec.model, name: $0.binding.model.advertisement.localName ?? "",
            spec: $0.spec)
        })
      for (index, event) in scenario.timeline.enumerated() {
        let device = running.first { $0.spec.id == event.device }
        let deviceEvents = deviceEvents[index]
        tasks.append(
          Task(executorPreference: Task.currentExecutorPreference) {
            await Self.play(
              event, device: device, deviceEvents: deviceEvents, clock: clock, signals: signals, ended: ended,
              fired: fired,
              stopwatch: stopwatch, progress: progress)
          })
      }
      if mode == .endToEnd {
        for device in running {
          let context = ClientContext(
            link: try await transport.centralLink(for: device.spec), clock: clock, observer: observer,
            transport: transport)
          let binding = device.binding
          tasks.append(
            Task(executorPreference: Task.currentExecutorPreference) {
              await binding.runClient(context)
            })
        }
      }
      let length = [scenario.duration, window].compactMap { $0 }.min()
      try await transport.run(for: length, granularity: .milliseconds(100)) { ended.isSet || stopWhen() }
    } catch {
      for task in tasks { task.cancel() }
      for device in running { await device.hosted.stop() }
      await transport.shutdown()
      throw error
    }
    let elapsed = stopwatch()
    // Cut by the window: it was shorter than the scenario, and the scenario did not end by itself first.
    let cut = window.flatMap { window in
      !ended.isSet && !stopWhen() && (scenario.duration.map { $0 > window } ?? true) ? window : nil
    }
    Logger.scenario.info(
      "run ends",
      metadata: [
        "scenario": "\(scenario.name)", "elapsed": "\(ScenarioDuration.format(elapsed))",
        "window": "\(cut.map(ScenarioDuration.format) ?? "none")",
      ])
    if let cut { progress("window: the run was cut at \(ScenarioDuration.format(cut)); counts are not checked") }
    // What the devices saw when the scenario ended, before the clients are stopped.
    var activity: [String: CentralActivity] = [:]
    for device in running { activity[device.spec.id] = device.peripheral.activity.snapshot }
    if mode == .endToEnd {
      // A device held back catches up; then the devices fall silent, and what
      // they sent before the end reaches the clients.
      await transport.catchUp()
      for device in running { device.peripheral.faults.silence() }
      await transport.drain { observer.reportCount }
    }
    for task in tasks { task.cancel() }
    for task in tasks { await task.value }
    var faults: [String: (Int, Int, Int)] = [:]
    for device in running {
      let plan = device.peripheral.faults
      faults[device.spec.id] = (plan.dropped, plan.corrupted, plan.rejectedWrites)
      await device.hosted.stop()
    }
    await transport.shutdown()
    let observations = observer.observations
    let results: [ScenarioReport.Result] =
      switch mode {
      case .host: []
      case .endToEnd:
        scenario.expectations.map {
          ExpectationCheck.evaluate($0, observations[$0.device], activity[$0.device], window: cut)
        }
      case .external:
        // Only what the device saw: no client of Doppel's observed anything.
        scenario.expectations.filter(\.check.isDeviceSide).map {
          ExpectationCheck.evaluate($0, nil, activity[$0.device], window: cut)
        }
      }
    return ScenarioReport(
      scenario: scenario.name, file: scenario.file, elapsed: elapsed, wallTime: ContinuousClock.now - wallStart,
      observations: observations, activity: activity, faults: faults, results: results,
      firedEvents: await fired.lines, timeline: await fired.events, window: cut)
  }

  /// Waits for an event's trigger, then applies its action once.
  private static func play(
    _ event: TimelineEvent, device: Running?, deviceEvents: AsyncStream<DeviceEventFeed.Event>?,
    clock: any Clock<Duration>, signals: SignalFactory, ended: EndFlag,
    fired: FiredLog, stopwatch: Stopwatch, progress: @escaping @Sendable (String) -> Void
  ) async {
    switch event.trigger {
    case .at(let time):
      let wait = time - stopwatch()
      if wait > .zero {
        do { try await clock.sleep(for: wait) } catch { return }
      }
    case .after(let name, _, let characteristic, let delay, let count):
      guard let deviceEvents else { return }
      var seen = 0
      for await happened in deviceEvents
      where happened.name == name && (characteristic == nil || happened.characteristic == characteristic) {
        seen += 1
        if seen == count { break }
      }
      guard seen == count, !Task.isCancelled else { return }
      if delay > .zero {
        do { try await clock.sleep(for: delay) } catch { return }
      }
    }
    guard !Task.isCancelled else { return }
    let now = stopwatch().seconds
    let line = String(format: "%8.3f s  %@: %@", now, event.device ?? "scenario", Self.describe(event.action))
    progress(line)
    Logger.scenario.info(
      "timeline event",
      metadata: ["device": "\(event.device ?? "scenario")", "action": "\(Self.describe(event.action))"])
    await fired.append(
      ScenarioReport.FiredEvent(time: now, device: event.device, action: Self.describe(event.action)), line: line)
    do {
      try await apply(event.action, to: device, clock: clock, signals: signals, ended: ended)
    } catch {
      Logger.scenario.warning(
        "timeline event failed", metadata: ["at": "\(event.location)", "error": "\(error)"])
      progress("  \(event.location): '\(Self.describe(event.action))' failed: \(error)")
      await fired.append("  failed: \(error)")
    }
  }

  private static func apply(
    _ action: ScenarioAction, to device: Running?, clock: any Clock<Duration>, signals: SignalFactory, ended: EndFlag
  ) async throws {
    if action == .end {
      ended.set()
      return
    }
    guard let device else { return }
    let faults = device.peripheral.faults
    switch action {
    case .advertise: try await device.hosted.setAdvertising(true, advertisement: nil)
    case .stopAdvertising: try await device.hosted.setAdvertising(false, advertisement: nil)
    case .acceptConnections(let accept): faults.acceptConnections(accept)
    case .disconnect:
      device.peripheral.activity.faultDisconnect()
      if let host = await device.peripheral.faultyHost {
        for central in await host.connectedCentrals { await host.disconnect(central) }
      }
    case .stall(let span, let drop):
      faults.stall(true, drop: drop)
      try? await clock.sleep(for: span)
      faults.stall(false)
    case .drop(let count): faults.drop(next: count)
    case .corrupt(let count): faults.corrupt(next: count)
    case .delayResponses(let delay): faults.delayResponses(by: delay)
    case .rejectWrites(let code, let count):
      faults.rejectWrites(with: code.map { ATTError(code: $0) }, count: count)
    case .setStream(let stream, let spec):
      let source = try signals.make(
        spec, device: device.spec.id, stream: stream, sampleRate: device.binding.sampleRate(of: stream))
      await device.binding.setSource(source, for: stream)
    case .rename(let name):
      var advertisement = device.binding.model.advertisement
      advertisement.localName = name
      try await device.hosted.setAdvertising(true, advertisement: advertisement)
    case .device(let name, let arguments):
      for consequence in try await device.binding.perform(name, arguments: arguments) {
        try await apply(consequence, to: device, clock: clock, signals: signals, ended: ended)
      }
    case .end: break
    }
  }

  static func describe(_ action: ScenarioAction) -> String {
    switch action {
    case .advertise: "advertise"
    case .stopAdvertising: "stop advertising"
    case .acceptConnections(let accept): accept ? "accept connections" : "refuse connections"
    case .disconnect: "disconnect"
    case .stall(let span, let drop):
      "stall notifications for \(ScenarioDuration.format(span))\(drop ? ", dropping them" : "")"
    case .drop(let count): "drop the next \(count) notifications"
    case .corrupt(let count): "corrupt the next \(count) notifications"
    case .delayResponses(let delay): "delay responses by \(ScenarioDuration.format(delay))"
    case .rejectWrites(let code, let count):
      code.map { "reject \(count.map { "the next \($0)" } ?? "all") writes with ATT error 0x\(String($0, radix: 16))" }
        ?? "accept writes"
    case .setStream(let stream, _): "change stream '\(stream)'"
    case .rename(let name): "rename to '\(name)'"
    case .device(let name, let arguments):
      arguments.isEmpty
        ? name
        : name + " " + arguments.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    case .end: "end"
    }
  }
}

/// Set once the timeline's `end` fires; read by the transport after every instant.
final class EndFlag: Sendable {
  private let flag = Atomic<Bool>(false)
  var isSet: Bool { flag.load(ordering: .acquiring) }
  func set() { flag.store(true, ordering: .releasing) }
}

/// The timeline events that fired, for the report.
actor FiredLog {
  private(set) var lines: [String] = []
  private(set) var events: [ScenarioReport.FiredEvent] = []
  func append(_ line: String) { lines.append(line) }
  func append(_ event: ScenarioReport.FiredEvent, line: String) {
    events.append(event)
    lines.append(line)
  }
}
