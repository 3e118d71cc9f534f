import E4
import E4Link
import Foundation
import GATT
import Scenario
import Signals

/// The Empatica E4 in scenarios: BVP, EDA, temperature and acceleration
/// streams from any source, button tags and battery from the timeline, and
/// the E4 link SDK-shaped client reporting every stream with the device's
/// timestamps, the heart rate from its interbeat intervals, tags and battery.
public struct E4Binding: DeviceBinding {
  static let battery = Setting.number("battery", in: 0...1, default: 1, help: "battery level at the start, 0…1")
  static let batteryDrain = Setting.number(
    "battery-drain", in: 0...10, default: 0.04, help: "battery used per hour while streaming, 0…1")
  static let ibiWarmUp = Setting.duration("ibi-warm-up", default: .seconds(20), help: "streaming before the first IBI")
  static let motionThreshold = Setting.number(
    "motion-threshold", in: 0...4, default: 0.15, help: "acceleration change (g) that voids a beat")
  static let batteryLevel = Setting.requiredNumber("level", in: 0...1, help: "the new level, 0…1 (0 powers it off)")
  static let authentication = Setting.choice(
    "authentication", ["accept", "refuse"], default: "accept",
    help: "what the (emulated) Empatica server answers the API key")
  static let connectTimeout = Setting.duration(
    "connect-timeout", default: .seconds(60), help: "how long to look and connect")
  static let reconnect = Setting.flag("reconnect", default: true, help: "connect again after the link is lost")

  public static let description = DeviceDescription(
    model: "e4",
    summary: "Empatica E4 wristband: BVP 64 Hz, acceleration 32 Hz, EDA and temperature 4 Hz, IBI, battery, tags",
    settings: [battery.spec, batteryDrain.spec, ibiWarmUp.spec, motionThreshold.spec],
    streams: [
      StreamSpec("bvp", unit: "BVP units", help: "blood volume pulse, 64 Hz"),
      StreamSpec("eda", unit: "µS", help: "electrodermal activity (skin conductance), 4 Hz"),
      StreamSpec("temperature", unit: "°C", help: "skin temperature, 4 Hz"),
      StreamSpec("acc.x", unit: "g", help: "acceleration along x, 32 Hz"),
      StreamSpec("acc.y", unit: "g", help: "acceleration along y, 32 Hz"),
      StreamSpec("acc.z", unit: "g", help: "acceleration along z, 32 Hz"),
    ],
    actions: [
      ActionSpec("tag", help: "press the button: a tag at the device's time"),
      ActionSpec("battery", parameters: [batteryLevel.spec], help: "set the battery level"),
      ActionSpec("power-off", help: "switch the wristband off (it disconnects)"),
    ],
    clientSettings: [authentication.spec, connectTimeout.spec, reconnect.spec],
    metrics: ["heart-rate", "battery"],
    events: ["tag", "ibi", "battery"],
    firmwareEvents: ["start-streaming", "stop-streaming", "refused-command"])

  public let device: DeviceSpec
  let wristband: E4

  public var model: any PeripheralModel { wristband }

  public init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError) {
    self.device = device
    let drain = device.settings[Self.batteryDrain]
    let configuration = E4Configuration(
      name: device.name ?? "Empatica E4", serialNumber: device.serial ?? "A00000",
      batteryLevel: device.settings[Self.battery],
      batteryDrain: drain == 0
        ? .none
        : E4Configuration.BatteryDrain(streamingPerHour: drain, connectedPerHour: drain / 2, idlePerHour: drain / 8),
      ibiWarmUp: device.settings[Self.ibiWarmUp].seconds,
      motionThreshold: device.settings[Self.motionThreshold])
    func source(_ signal: E4Signal, _ fallback: any SignalSource) throws(ScenarioError) -> any SignalSource {
      guard let spec = device.streams[signal.rawValue] else { return fallback }
      return try signals.make(spec, for: device, stream: signal.rawValue, sampleRate: Double(signal.sampleRate))
    }
    let seed = { (stream: String) in signals.seed(device: device.id, stream: stream) }
    wristband = E4(
      configuration: configuration,
      bvp: try source(.bvp, SyntheticPPG(seed: seed("bvp"))),
      eda: try source(.eda, SyntheticEDA(seed: seed("eda"))),
      temperature: try source(.temperature, TemperatureDrift(seed: seed("temperature"))),
      accelerationX: try source(.accelerationX, ConstantSignal(0)),
      accelerationY: try source(.accelerationY, ConstantSignal(0)),
      accelerationZ: try source(.accelerationZ, ConstantSignal(1)))
  }

  public func setSource(_ source: any SignalSource, for stream: String) async {
    guard let signal = E4Signal(rawValue: stream) else { return }
    await wristband.setSource(source, for: signal)
  }

  public func sampleRate(of stream: String) -> Double {
    Double(E4Signal(rawValue: stream)?.sampleRate ?? 4)
  }

  public func perform(_ action: String, arguments: [String: SettingValue]) async throws -> [ScenarioAction] {
    switch action {
    case "tag":
      _ = await wristband.pressButton()
      return []
    case "battery":
      // Switched off, the device stops advertising itself; charged, it starts again.
      await wristband.setBattery(arguments[Self.batteryLevel])
    case "power-off":
      await wristband.powerOff()
    default:
      throw ScenarioError(.unknownReference, file: "", line: 0, column: 0, "an e4 has no action '\(action)'")
    }
    return []
  }

  public func runClient(_ context: ClientContext) async {
    let id = device.id
    let observer = context.observer
    let clock = context.clock
    let refuse = device.client[Self.authentication] == "refuse"
    let timeout = device.client[Self.connectTimeout]
    // Unix time for the start command, moving with the run's clock (virtual or wall).
    let origin = Date().timeIntervalSince1970.rounded()
    let elapsed = Stopwatch(clock)
    let api = EmpaticaAPI(
      link: context.link,
      authenticator: refuse ? E4LocalVerifier.refusingEveryKey() : E4LocalVerifier.acceptingAnyKey,
      clock: clock, unixTime: { origin + elapsed().seconds })
    let authentication = await api.authenticate(apiKey: "doppel-scenario-key")
    guard authentication.success else {
      observer.error("authentication failed: \(authentication.description)", device: id)
      // The SDK refuses discovery without a valid key: show that it does.
      do {
        _ = try await api.discoverDevices(duration: .seconds(1))
      } catch {
        observer.error("discovery refused: \(error)", device: id)
      }
      return
    }
    // The app looks again, as its user would, until it finds the wristband
    // (once only without `reconnect`).
    var found = await find(api: api, timeout: timeout, observer: observer)
    while found == nil, device.client[Self.reconnect], !Task.isCancelled {
      try? await clock.sleep(for: .seconds(1))
      found = await find(api: api, timeout: timeout, observer: observer)
    }
    guard let manager = found else { return }
    // Set before connecting, so nothing sent is missed.
    await manager.setDelegate(E4Reporter(observer: observer, device: id, origin: origin))
    await ClientSession(device: id, context: context, reconnect: device.client[Self.reconnect]).run(
      connect: {
        try await manager.connect(timeout: timeout)
        return manager
      },
      serve: { manager in
        for await status in await manager.statusUpdates() where status == .disconnected { break }
      },
      // The wristband is disconnected once, below, after the run.
      close: { _ in })
    let malformed = await manager.malformedPackets
    for _ in 0..<malformed { observer.event("malformed", device: id) }
    // Delivers what the subscriptions still hold before it returns.
    await manager.disconnect()
  }

  /// Scans until the wristband with this device's name shows up.
  private func find(api: EmpaticaAPI, timeout: Duration, observer: ClientObserver) async
    -> E4DeviceManager?
  {
    let name = device.name ?? E4Profile.advertisedName
    do {
      for await event in try await api.discoverDevices(duration: timeout, namePrefix: name) {
        if case .found(let manager) = event { return manager }
      }
      if !Task.isCancelled {
        observer.error("no wristband named '\(name)' found within \(timeout)", device: device.id)
      }
    } catch {
      observer.error("discovery: \(error)", device: device.id)
    }
    return nil
  }

}
