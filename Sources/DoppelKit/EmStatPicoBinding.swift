import EmStatPico
import EmStatPicoClient
import Foundation
import GATT
import MethodScriptFormat
import Scenario
import Signals

/// The EmStat Pico in scenarios: a simulated cell chosen by the settings, and
/// the client shaped like PalmSens' iOS example, which connects, reads the
/// firmware version, sends the scenario's MethodSCRIPT and reports every
/// package (potential, current, impedance), the loop's start and end, and the
/// device's error lines.
public struct EmStatPicoBinding: DeviceBinding {
  /// PalmSens' LSV on the 10 kΩ dummy cell: −0.5 V to 0.5 V in 10 mV steps at 0.5 V/s (101 points, 2 s).
  public static let defaultScript = """
    e
    var c
    var p
    set_pgstat_chan 0
    set_pgstat_mode 3
    set_max_bandwidth 200
    set_range_minmax da -500m 500m
    set_range ba 100u
    set_autoranging ba 100n 1m
    set_e -500m
    cell_on
    meas_loop_lsv p c -500m 500m 10m 500m
      pck_start
      pck_add p
      pck_add c
      pck_end
    endloop
    on_finished:
      cell_off

    """

  static let cell = Setting.choice(
    "cell", ["resistor", "series-rc", "randles", "open"], default: "resistor",
    help: "the simulated cell on the electrodes")
  static let resistance = Setting.number(
    "resistance", in: 1...1e9, default: 10_000, help: "Ω of the resistor and of the series RC")
  static let capacitance = Setting.number("capacitance", in: 1e-12...1, default: 10e-6, help: "F of the series RC")
  static let solutionResistance = Setting.number(
    "solution-resistance", in: 0...1e9, default: 100, help: "Randles Rs, Ω")
  static let chargeTransferResistance = Setting.number(
    "charge-transfer-resistance", in: 1...1e9, default: 1_000, help: "Randles Rct, Ω")
  static let doubleLayerCapacitance = Setting.number(
    "double-layer-capacitance", in: 1e-12...1, default: 1e-6, help: "Randles Cdl, F")
  static let redox = Setting.flag(
    "redox", default: false,
    help:
      "add a reversible 1 mM couple at E⁰′ = 0.2 V (faradaic current under potential control, Warburg impedance in EIS and ACV)"
  )
  static let restPotential = Setting.number(
    "rest-potential", in: -2...2, default: 0, help: "the cell's open-circuit potential, V (where OCP settles)")
  static let multiplexer = Setting.optionalText(
    "mux-resistances",
    help: "resistors (Ω, comma-separated) behind a multiplexer, channel 0 first (`mux_set_channel` picks one)")
  static let currentNoise = Setting.number(
    "current-noise", in: 0...0.1, default: 1e-4,
    help: "current noise, standard deviation as a fraction of the range's full scale")
  static let impedanceNoise = Setting.number(
    "impedance-noise", in: 0...0.1, default: 1e-3, help: "relative impedance noise")
  static let notificationPayload = Setting.integer(
    "notification-payload", in: 20...244, default: 20,
    help:
      "most bytes a TX FIFO notification carries: 20 as PalmSens describes the module; more (within ATT_MTU − 3) for throughput runs"
  )
  static let outputGathering = Setting.duration(
    "output-gathering", default: .zero,
    help: "how long output may gather before a notification that is not full goes out (e.g. 7.5ms)")
  static let gpioPin = Setting.integer("pin", in: 0...(GPIOPins.count - 1), default: 0, help: "the GPIO pin, 0–9")
  static let gpioLevel = Setting.choice(
    "level", ["high", "low", "open"], default: "low", help: "drive the pin high or low, or let it go (open)")
  static let failCode = Setting.integer("code", in: 1...0xFFFF, default: 1, help: "the error code")
  static let script = Setting.optionalText(
    "script",
    help:
      "the MethodSCRIPT to run (default: PalmSens' LSV on the 10 kΩ dummy cell; `e` and the final empty line are added when missing)"
  )
  static let scriptFile = Setting.optionalText(
    "script-file", help: "a file with the MethodSCRIPT, relative to the scenario (replaces script)")
  static let connectTimeout = Setting.duration(
    "connect-timeout", default: .seconds(60), help: "how long to scan and connect")
  static let reconnect = Setting.flag(
    "reconnect", default: true,
    help: "connect again after the link is lost and send the script again, as a user pressing play would")
  static let abortAfter = Setting.optionalDuration("abort-after", help: "send `Z` this long after the script was sent")

  public static let description = DeviceDescription(
    model: "emstat-pico",
    summary: "PalmSens EmStat Pico potentiostat behind a Laird VSP service: MethodSCRIPT in, measurement packages out",
    settings: [
      cell.spec, resistance.spec, capacitance.spec, solutionResistance.spec, chargeTransferResistance.spec,
      doubleLayerCapacitance.spec, redox.spec, restPotential.spec, multiplexer.spec, currentNoise.spec,
      impedanceNoise.spec,
      notificationPayload.spec,
      outputGathering.spec,
    ],
    streams: [
      StreamSpec(
        "current", unit: "A", help: "WE current the client decodes; a source here adds to the cell's current"),
      StreamSpec(
        "potential", unit: "V", help: "set potential the client decodes (the script sets it; a source is unused)"),
      StreamSpec("z-real", unit: "Ω", help: "real part of the impedance the client decodes (EIS)"),
      StreamSpec("z-imaginary", unit: "Ω", help: "imaginary part of the impedance the client decodes (EIS)"),
    ],
    actions: [
      ActionSpec("abort", help: "stop the running script as `Z` does: its loop ends, then `on_finished:`"),
      ActionSpec(
        "gpio", parameters: [gpioPin.spec, gpioLevel.spec],
        help: "drive a GPIO input from outside, as a button or a sensor would (`get_gpio` reads it)"),
      ActionSpec(
        "wake-pin",
        help:
          "press the WAKE pin: wakes a script from `hibernate` when the pin is one of its sources; a press before the "
          + "script hibernates is forgotten, so time it `after: hibernate`"),
      ActionSpec(
        "fail", parameters: [failCode.spec],
        help: "end the running script with an error line `!XXXX: Line 1, Col 1` (a fault mid-run)"),
    ],
    clientSettings: [script.spec, scriptFile.spec, connectTimeout.spec, reconnect.spec, abortAfter.spec],
    metrics: [
      "points", "points-per-second", "loop-points-per-second", "last-current", "last-potential", "last-z-real",
      "last-z-imaginary", "peak-current", "peak-potential",
    ],
    events: [
      "version", "script-sent", "measurement-started", "measurement-ended", "script-ended", "aborted", "overload",
      "device-error",
    ],
    firmwareEvents: ["command", "script", "script-refused", "script-done", "abort", "gpio", "hibernate", "wake"])

  public let device: DeviceSpec
  let pico: EmStatPico
  let script: String

  public var model: any PeripheralModel { pico }

  public init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError) {
    self.device = device
    let settings = device.settings
    let circuit: ElectrochemicalCell.Circuit
    switch settings[Self.cell] {
    case "series-rc":
      circuit = .seriesRC(resistance: settings[Self.resistance], capacitance: settings[Self.capacitance])
    case "randles":
      circuit = .randles(
        solutionResistance: settings[Self.solutionResistance],
        chargeTransferResistance: settings[Self.chargeTransferResistance],
        doubleLayerCapacitance: settings[Self.doubleLayerCapacitance])
    case "open":
      circuit = .open
    default:
      circuit = .resistor(settings[Self.resistance])
    }
    var multiplexerCells: [ElectrochemicalCell] = []
    if let list = settings[Self.multiplexer] {
      for field in list.split(separator: ",") {
        guard let ohms = Double(field.trimmingCharacters(in: .whitespaces)), ohms > 0, ohms.isFinite else {
          let location = device.location(of: "config.mux-resistances")
          throw ScenarioError(
            .invalidValue, file: location.file, line: location.line, column: location.column,
            "'\(field)' in 'mux-resistances' of '\(device.id)' is not a resistance in Ω",
            suggestion: "write positive numbers separated by commas, e.g. 1000, 2000, 5000")
        }
        multiplexerCells.append(.resistor(ohms))
      }
    }
    var background: (any SignalSource)?
    if let spec = device.streams["current"] {
      background = try signals.make(spec, for: device, stream: "current", sampleRate: 1_000)
    }
    pico = EmStatPico(
      configuration: EmStatPicoConfiguration(
        name: device.name ?? "EmStat Pico", serialNumber: device.serial ?? "ESPICO0001",
        cell: ElectrochemicalCell(
          circuit: circuit, redox: settings[Self.redox] ? RedoxCouple() : nil,
          restPotential: settings[Self.restPotential]),
        currentNoise: settings[Self.currentNoise], impedanceNoise: settings[Self.impedanceNoise],
        seed: signals.seed(device: device.id, stream: "current"),
        notificationPayload: settings[Self.notificationPayload], outputGathering: settings[Self.outputGathering],
        backgroundCurrent: background, multiplexerCells: multiplexerCells))
    if let file = device.client[Self.scriptFile] {
      let path = file.hasPrefix("/") ? file : URL(fileURLWithPath: signals.directory).appendingPathComponent(file).path
      guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        let location = device.location(of: "client.script-file")
        throw ScenarioError(
          .unreadable, file: location.file, line: location.line, column: location.column,
          "cannot read the MethodSCRIPT file '\(path)' that '\(device.id)' names in 'script-file'",
          suggestion: "the path is relative to the scenario's folder")
      }
      script = text
    } else if let text = device.client[Self.script] {
      script = text
    } else {
      script = Self.defaultScript
    }
  }

  public func setSource(_ source: any SignalSource, for stream: String) async {
    if stream == "current" { await pico.setBackgroundCurrent(source) }
  }

  public func sampleRate(of stream: String) -> Double { 1_000 }

  public func perform(_ action: String, arguments: [String: SettingValue]) async throws -> [ScenarioAction] {
    switch action {
    case "abort":
      await pico.abortScript()
    case "gpio":
      let level = arguments[Self.gpioLevel]
      pico.gpio.drive(arguments[Self.gpioPin], high: level == "open" ? nil : level == "high")
    case "wake-pin":
      await pico.pressWakePin()
    case "fail":
      let raw = UInt16(clamping: arguments[Self.failCode])
      await pico.failScript(MethodScriptError.Code(rawValue: raw) ?? .unspecified)
    default:
      throw ScenarioError(.unknownReference, file: "", line: 0, column: 0, "an emstat-pico has no action '\(action)'")
    }
    return []
  }

  public func runClient(_ context: ClientContext) async {
    let id = device.id
    let observer = context.observer
    let clock = context.clock
    let timeout = device.client[Self.connectTimeout]
    let abortAfter = device.client[Self.abortAfter]
    var points = 0
    await ClientSession(device: id, context: context, reconnect: device.client[Self.reconnect]).run(
      connect: {
        let client = EmStatPicoClient(link: context.link, clock: clock)
        // Answers take no virtual time in the loopback, but the work to get
        // them takes real time: until the script has been written, let
        // virtual time pass no faster than real time, so that the timeline
        // does not jump ahead of the handshake.
        let pacer = Self.pace(clock)
        do {
          try await client.connect(namePrefix: device.name, timeout: timeout)
        } catch {
          pacer.cancel()
          throw error
        }
        return (client, pacer)
      },
      serve: { connected in
        let (client, pacer) = connected
        defer { pacer.cancel() }
        let states = await client.states()
        let version = try await client.sendCommandVersion()
        observer.event("version", device: id, detail: version)
        try await measure(
          client, clock: clock, abortAfter: abortAfter, pacer: pacer, points: &points, observer: observer)
        // Connected until the run ends or the link is lost.
        for await state in states {
          if case .disconnected = state { break }
        }
      },
      linkLost: { error, connected in
        if case .disconnected = await connected.0.state { return "\(error)" }
        return nil
      },
      close: { connected in
        connected.1.cancel()
        await connected.0.disconnect()
      })
  }

  /// Sleeps on `clock` a millisecond at a time, each after a millisecond of
  /// real time, until cancelled (on a wall clock: just sleeps).
  private static func pace(_ clock: any Clock<Duration>) -> Task<Void, Never> {
    Task(executorPreference: Task.currentExecutorPreference) {
      while !Task.isCancelled {
        try? await clock.sleep(for: .milliseconds(1))
        try? await Task.sleep(for: .milliseconds(1))
      }
    }
  }

  /// Sends the script and reports its output until it ends. A device error
  /// line is reported as the event `device-error` (not a client error).
  private func measure(
    _ client: EmStatPicoClient, clock: any Clock<Duration>, abortAfter: Duration?, pacer: Task<Void, Never>,
    points: inout Int, observer: ClientObserver
  ) async throws {
    defer { pacer.cancel() }
    let id = device.id
    let elapsed = Stopwatch(clock)
    let pointsBefore = points
    var loopStart: (time: Duration, points: Int)?
    var peak: (current: Double, potential: Double?)?
    let stream = try await client.sendMethodScript(script)
    observer.event("script-sent", device: id)
    let aborter = abortAfter.map { delay in
      Task(executorPreference: Task.currentExecutorPreference) {
        try? await clock.sleep(for: delay)
        guard !Task.isCancelled else { return }
        try? await client.abort()
      }
    }
    defer { aborter?.cancel() }
    do {
      for try await event in stream {
        switch event {
        case .scriptAccepted:
          // Read after the script's last acknowledged write: the device has
          // all of it, and runs it (or refuses it) on its own clock, so a
          // wait or a hibernation before its first loop takes virtual time.
          pacer.cancel()
        case .loopStarted(let loop):
          loopStart = (elapsed(), points)
          observer.event("measurement-started", device: id, detail: "M" + loop)
        case .loopEnded:
          // Points per second from sending the script to the loop's last
          // package, and the sustained rate from the loop's start (`M…`) on.
          let end = elapsed()
          if end > .zero {
            observer.metric("points-per-second", Double(points - pointsBefore) / end.seconds, device: id)
          }
          if let loopStart, end > loopStart.time {
            let rate = Double(points - loopStart.points) / (end - loopStart.time).seconds
            observer.metric("loop-points-per-second", rate, device: id)
          }
          observer.event("measurement-ended", device: id)
        case .package(let package):
          points += 1
          observer.metric("points", Double(points), device: id)
          if package.status?.contains(.overload) == true {
            observer.event("overload", device: id, detail: package.line)
          }
          let time = package.time
          let potential = package.potential ?? package.first(.wePotential)?.value
          if let e = potential {
            observer.sample(e, stream: "potential", device: id, time: time)
            observer.metric("last-potential", e, device: id)
          }
          if let i = package.current {
            observer.sample(i, stream: "current", device: id, time: time)
            observer.metric("last-current", i, device: id)
            // The largest current so far and its potential: a DPV's or SWV's peak.
            if abs(i) > abs(peak?.current ?? 0) {
              peak = (i, potential)
              observer.metric("peak-current", i, device: id)
              if let potential { observer.metric("peak-potential", potential, device: id) }
            }
          }
          if let re = package.zReal {
            observer.sample(re, stream: "z-real", device: id, time: time)
            observer.metric("last-z-real", re, device: id)
          }
          if let im = package.zImaginary {
            observer.sample(im, stream: "z-imaginary", device: id, time: time)
            observer.metric("last-z-imaginary", im, device: id)
          }
        case .malformedPackage(let line, let reason):
          observer.event("malformed", device: id, detail: "\(line): \(reason)")
        case .abortAcknowledged:
          observer.event("aborted", device: id)
        case .scanStarted, .scanEnded, .nestedLoopStarted, .nestedLoopEnded, .text:
          break
        }
      }
      // A run that ends cancels the client: the stream stops without the script's end.
      guard !Task.isCancelled else { return }
      observer.event("script-ended", device: id)
    } catch let error as EmStatPicoClientError {
      guard case .device(let code, let detail) = error.code else { throw error }
      let hex = String(code, radix: 16, uppercase: true)
      observer.event(
        "device-error", device: id, detail: "!" + String(repeating: "0", count: 4 - hex.count) + hex + detail)
    }
  }
}
