import ArctopSDK
import GATT
import Muse
import Scenario
import Signals

/// The Muse headband in scenarios: synthetic EEG (or muse-lsl recordings)
/// on TP9, AF7, AF8, TP10 and AUX, motion, PPG and battery; the wearer's
/// eyes, the headband's contact and the battery from the timeline; and the
/// Arctop SDK-shaped client reporting EEG, signal quality, sessions and the
/// predictions of an in-process stand-in for Arctop's service, which the
/// timeline can take down or stall.
public struct MuseBinding: DeviceBinding {
  static let variant = Setting.choice(
    "variant", MuseConfiguration.Variant.allCases.map(\.rawValue), default: "muse-2",
    help: "muse-2016 (no PPG), muse-2 or muse-s")
  static let battery = Setting.number("battery", in: 0...1, default: 1, help: "battery level at the start, 0…1")
  static let batteryDrain = Setting.number(
    "battery-drain", in: 0...10, default: 0.2, help: "battery used per hour while streaming, 0…1")
  static let preset = Setting.choice(
    "preset", MusePreset.all.map { "p" + $0.number }, default: "p21", help: "the preset until a central selects one")
  static let alphaOpen = Setting.number("alpha-open", in: 0...200, default: 4, help: "alpha amplitude, eyes open, µV")
  static let alphaClosed = Setting.number(
    "alpha-closed", in: 0...200, default: 20, help: "alpha amplitude, eyes closed, µV")
  static let alphaFrequency = Setting.number("alpha-frequency", in: 8...12, default: 10, help: "alpha peak, Hz")
  static let background = Setting.number("background", in: 0...200, default: 10, help: "1/f background, µV (SD)")
  static let blinks = Setting.number("blinks-per-minute", in: 0...60, default: 15, help: "blinks with the eyes open")
  static let muscle = Setting.number(
    "muscle-per-minute", in: 0...60, default: 0.5, help: "bursts of muscle activity (TP9, TP10)")
  static let lineNoise = Setting.number("line-noise", in: 0...500, default: 0, help: "mains hum amplitude, µV")
  static let lineFrequency = Setting.number("line-frequency", in: 45...65, default: 50, help: "mains frequency, Hz")
  static let offHead = Setting.choice(
    "off-head", SyntheticEEG.OffHead.allCases.map(\.rawValue), default: "rail",
    help: "what the channels show off the head: rail or flat")

  static let state = Setting.choice("state", ["closed", "open"], default: "closed", help: "the eyes")
  static let headbandState = Setting.choice("state", ["off", "on"], default: "off", help: "the headband")
  static let muscleState = Setting.choice("state", ["on", "off"], default: "on", help: "the jaw clenched or not")
  static let serviceState = Setting.choice(
    "state", ArctopPredictionService.Availability.allCases.map(\.rawValue), default: "down",
    help: "up, down (every call fails) or stall (calls never answer)")
  static let batteryLevel = Setting.requiredNumber("level", in: 0...1, help: "the new level, 0…1 (0 powers it off)")

  static let apiKey = Setting.text(
    "api-key", default: "doppel-scenario-key", help: "the API key (\(ArctopPredictionService.refusedKey) is refused)")
  static let prediction = Setting.choice(
    "prediction", ArctopSDKPredictions.all, default: ArctopSDKPredictions.zone, help: "the prediction session to run")
  static let sessionLength = Setting.optionalDuration(
    "session-length", help: "finish the session (and upload it) after this long; default: at the end")
  static let service = Setting.choice(
    "prediction-service", ArctopPredictionService.Availability.allCases.map(\.rawValue), default: "up",
    help: "the prediction service stand-in at the start")
  static let calibration = Setting.choice(
    "calibration", ["unknown", "blocked", "needsCalibration", "calibrationDone", "modelsAvailable"],
    default: "modelsAvailable", help: "the user's calibration status")
  static let serviceTimeout = Setting.duration(
    "service-timeout", default: .seconds(3), help: "how long a call to the prediction service may take")
  static let connectTimeout = Setting.duration(
    "connect-timeout", default: .seconds(30), help: "how long to scan and connect")
  static let reconnect = Setting.flag("reconnect", default: true, help: "connect again after the link is lost")

  public static let description = DeviceDescription(
    model: "muse",
    summary: "Muse EEG headband (Arctop SDK): EEG 256 Hz on TP9, AF7, AF8, TP10, AUX; motion 52 Hz; PPG; battery",
    settings: [
      variant.spec, battery.spec, batteryDrain.spec, preset.spec, alphaOpen.spec, alphaClosed.spec,
      alphaFrequency.spec, background.spec, blinks.spec, muscle.spec, lineNoise.spec, lineFrequency.spec,
      offHead.spec,
    ],
    streams: MuseChannel.allCases.map {
      StreamSpec($0.rawValue, unit: "µV", help: "EEG at \($0.recordingName), 256 Hz")
    }
      + ["x", "y", "z"].map { StreamSpec("acc.\($0)", unit: "g", help: "acceleration along \($0), 52 Hz") }
      + ["x", "y", "z"].map { StreamSpec("gyro.\($0)", unit: "°/s", help: "rotation about \($0), 52 Hz") }
      + [StreamSpec("ppg", unit: "pulse units", help: "the pulse wave on the PPG (Muse 2 and S, preset p50), 64 Hz")],
    actions: [
      ActionSpec("eyes", parameters: [state.spec], help: "the wearer closes or opens the eyes (alpha rises or falls)"),
      ActionSpec("headband", parameters: [headbandState.spec], help: "take the headband off the head or put it on"),
      ActionSpec("muscle", parameters: [muscleState.spec], help: "the wearer clenches the jaw or relaxes"),
      ActionSpec("battery", parameters: [batteryLevel.spec], help: "set the battery level"),
      ActionSpec("power-off", help: "switch the headband off (it disconnects)"),
      ActionSpec(
        "prediction-service", parameters: [serviceState.spec],
        help: "take Arctop's service stand-in down, stall it, or bring it up"),
    ],
    clientSettings: [
      apiKey.spec, prediction.spec, sessionLength.spec, service.spec, calibration.spec, serviceTimeout.spec,
      connectTimeout.spec, reconnect.spec,
    ],
    metrics: ["focus", "enjoyment", "flow", "sleep", "blink", "alpha", "good-sensors", "battery"],
    events: [
      "device-list", "session-started", "session-finished", "upload-complete", "upload-failed", "headband-on",
      "headband-off", "qa-passed", "qa-off-head", "qa-motion", "qa-eeg-failure", "prediction", "blink",
    ],
    firmwareEvents: [
      "version", "status", "start-streaming", "stop-streaming", "keep-alive", "reset", "preset", "unknown-command",
      "refused-command",
    ])

  public let device: DeviceSpec
  let headband: MuseHeadband
  /// Arctop's service as the client sees it; the timeline can take it down.
  let predictionService: ArctopPredictionService

  public var model: any PeripheralModel { headband }

  public init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError) {
    self.device = device
    var eeg = SyntheticEEG.Parameters()
    eeg.alphaOpen = device.settings[Self.alphaOpen]
    eeg.alphaClosed = device.settings[Self.alphaClosed]
    eeg.alphaFrequency = device.settings[Self.alphaFrequency]
    eeg.background = device.settings[Self.background]
    eeg.blinksPerMinute = device.settings[Self.blinks]
    eeg.musclePerMinute = device.settings[Self.muscle]
    eeg.lineNoise = device.settings[Self.lineNoise]
    eeg.lineFrequency = device.settings[Self.lineFrequency]
    eeg.offHead = SyntheticEEG.OffHead(rawValue: device.settings[Self.offHead]) ?? .rail
    let configuration = MuseConfiguration(
      name: device.name ?? "Muse-1A2B", serialNumber: device.serial ?? "1A2B-3C4D-5E6F",
      variant: MuseConfiguration.Variant(rawValue: device.settings[Self.variant]) ?? .muse2,
      batteryLevel: device.settings[Self.battery], batteryDrainPerHour: device.settings[Self.batteryDrain],
      preset: MusePreset.named(device.settings[Self.preset]) ?? .p21, eeg: eeg)
    func source(_ stream: String, rate: Double, _ fallback: any SignalSource) throws(ScenarioError) -> any SignalSource
    {
      guard let spec = device.streams[stream] else { return fallback }
      return try signals.make(spec, for: device, stream: stream, sampleRate: rate)
    }
    var channels: [MuseChannel: any SignalSource] = [:]
    for channel in MuseChannel.allCases {
      if let spec = device.streams[channel.rawValue] {
        channels[channel] = try signals.make(spec, for: device, stream: channel.rawValue, sampleRate: 256)
      }
    }
    headband = MuseHeadband(
      configuration: configuration, seed: signals.seed(device: device.id, stream: "eeg"), channels: channels,
      acceleration: [
        try source("acc.x", rate: 52, ConstantSignal(0)), try source("acc.y", rate: 52, ConstantSignal(0)),
        try source("acc.z", rate: 52, ConstantSignal(1)),
      ],
      rotation: [
        try source("gyro.x", rate: 52, ConstantSignal(0)), try source("gyro.y", rate: 52, ConstantSignal(0)),
        try source("gyro.z", rate: 52, ConstantSignal(0)),
      ],
      pulse: try source("ppg", rate: 64, SyntheticPPG(seed: signals.seed(device: device.id, stream: "ppg"))))
    let calibration: UserCalibrationStatus =
      switch device.client[Self.calibration] {
      case "unknown": .unknown
      case "blocked": .blocked
      case "needsCalibration": .needsCalibration
      case "calibrationDone": .calibrationDone
      default: .modelsAvailable
      }
    predictionService = ArctopPredictionService(
      availability: ArctopPredictionService.Availability(rawValue: device.client[Self.service]) ?? .up,
      calibration: calibration)
  }

  public func setSource(_ source: any SignalSource, for stream: String) async {
    if let channel = MuseChannel(rawValue: stream) {
      await headband.setSource(source, for: channel)
    } else if let axis = ["acc.x", "acc.y", "acc.z", "gyro.x", "gyro.y", "gyro.z"].firstIndex(of: stream) {
      await headband.setMotion(source, axis: axis)
    }
  }

  public func sampleRate(of stream: String) -> Double {
    MuseChannel(rawValue: stream) != nil ? 256 : stream == "ppg" ? 64 : 52
  }

  public func perform(_ action: String, arguments: [String: SettingValue]) async throws -> [ScenarioAction] {
    switch action {
    case "eyes":
      await headband.setEyesClosed(arguments[Self.state] == "closed")
    case "headband":
      await headband.setOnHead(arguments[Self.headbandState] == "on")
    case "muscle":
      await headband.setMuscle(arguments[Self.muscleState] == "on")
    case "battery":
      // Switched off, the device stops advertising itself; charged, it starts again.
      await headband.setBattery(arguments[Self.batteryLevel])
    case "power-off":
      await headband.powerOff()
    case "prediction-service":
      let state = ArctopPredictionService.Availability(rawValue: arguments[Self.serviceState]) ?? .down
      await predictionService.setAvailability(state)
    default:
      throw ScenarioError(.unknownReference, file: "", line: 0, column: 0, "a muse has no action '\(action)'")
    }
    return []
  }

  public func runClient(_ context: ClientContext) async {
    let id = device.id
    let observer = context.observer
    let clock = context.clock
    let timeout = device.client[Self.connectTimeout]
    await predictionService.setClock(clock)
    let client = ArctopSDKClient(
      link: context.link, clock: clock, service: predictionService,
      serviceTimeout: device.client[Self.serviceTimeout], connectTimeout: timeout)
    let reporter = MuseReporter(observer: observer, device: id)
    await client.registerListener(reporter as any ArctopSdkListener)
    await client.registerListener(reporter as any ArctopQAListener)
    await client.registerListener(reporter as any ArctopSessionUploadListener)
    await client.registerListener(reporter as any ArctopRawDataListener)
    guard await prepare(client, observer: observer) else { return }
    let name = device.name ?? "Muse-1A2B"
    let prediction = device.client[Self.prediction]
    let sessionLength = device.client[Self.sessionLength]
    var finisher: Task<Void, Never>?
    var sessionTried = false
    var states = reporter.states.makeAsyncIterator()
    await ClientSession(device: id, context: context, reconnect: device.client[Self.reconnect]).run(
      connect: {
        if !reporter.knownDevices.contains(name) {
          try await reporter.withDeviceListUpdates { lists in
            try await client.scanForAvailableDevices()
            do {
              try await Self.waitFor(name, in: lists, within: timeout, clock: clock)
            } catch {
              try? await client.terminateScanForDevices()
              throw error
            }
          }
          try await client.terminateScanForDevices()
        }
        try await client.connectSensorDevice(deviceId: name)
        while let state = await states.next() {
          if state == .connected { return client }
          if state == .connectionFailed {
            let why = await client.connectionFailure.map { ": \($0)" } ?? ""
            throw ArctopSDKError(.notConnected, "connecting to \(name) failed\(why)")
          }
        }
        throw CancellationError()
      },
      serve: { client in
        if !sessionTried {
          sessionTried = true
          switch await client.startPredictionSession(prediction) {
          case .success:
            if let sessionLength {
              finisher = Task(executorPreference: Task.currentExecutorPreference) {
                do { try await clock.sleep(for: sessionLength) } catch { return }
                if case .failure(let error) = await client.finishSession() {
                  observer.error("finishSession: \(error)", device: id)
                }
              }
            }
          case .failure(let error):
            observer.error("startPredictionSession: \(error)", device: id)
          }
        }
        while let state = await states.next() {
          if state == .disconnected || state == .disconnectedUponRequest { return }
        }
      },
      close: { client in try? await client.disconnectSensorDevice() })
    finisher?.cancel()
    let malformed = await client.malformedPackets
    for _ in 0..<malformed { observer.event("malformed", device: id) }
  }

  /// Initialises the SDK and checks the user as the document's setup and
  /// session phases say; `false` (with an error reported) when that fails.
  private func prepare(_ client: ArctopSDKClient, observer: ClientObserver) async -> Bool {
    let id = device.id
    if case .failure(let error) = await client.initializeArctop(
      apiKey: device.client[Self.apiKey], bundle: "invalid.doppel.scenario")
    {
      observer.error("initializeArctop: \(error)", device: id)
      return false
    }
    do {
      if try await !client.isUserLoggedIn() { _ = try await client.loginUser().get() }
      let status = try await client.checkUserCalibrationStatus().get()
      if status != .modelsAvailable { observer.error("the user's calibration is \(status)", device: id) }
    } catch {
      observer.error("user: \(error)", device: id)
    }
    return true
  }

  /// Waits until a device list names `name`, for at most `limit`.
  private static func waitFor(
    _ name: String, in lists: AsyncStream<[String]>, within limit: Duration, clock: any Clock<Duration>
  ) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        for await list in lists where list.contains(name) { return }
        throw CancellationError()
      }
      group.addTask {
        try await clock.sleep(for: limit)
        throw ArctopSDKError(.unknownDevice, "no headband named '\(name)' found within \(limit)")
      }
      defer { group.cancelAll() }
      try await group.next()
    }
  }
}
