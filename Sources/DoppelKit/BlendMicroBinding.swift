import BlendMicro
import BlendMicroClient
import GATT
import Scenario
import Signals
import Synchronization

/// The Blend Micro in scenarios: an ECG stream, and the Kardia-shaped client
/// that reports samples, malformed notifications, the heart rate and fresh
/// arrhythmia episodes.
public struct BlendMicroBinding: DeviceBinding {
  static let sampleRateSetting = Setting.number(
    "sample-rate", in: 1...1000, default: 100, help: "ECG samples per second")
  static let heartRate = Setting.number(
    "heart-rate", in: 20...250, default: 72, help: "heart rate of the default synthetic ECG, bpm")
  static let noise = Setting.number(
    "noise", in: 0...10, default: 0.01, help: "noise of the default synthetic ECG, mV")
  static let connectTimeout = Setting.duration(
    "connect-timeout", default: .seconds(60), help: "how long to scan and connect")
  static let reconnect = Setting.flag(
    "reconnect", default: true, help: "connect again after a disconnect, as the app does")
  static let window = Setting.duration("window", default: .seconds(10), help: "ECG the heart rate is computed over")
  static let kardiaRelay = Setting.flag(
    "kardia-relay", default: false,
    help:
      "relay the samples to a Kardia analysis server run in process (Socket.IO on 127.0.0.1) and report its answers"
  )

  public static let description = DeviceDescription(
    model: "blend-micro",
    summary: "RedBearLabs Blend Micro with the Kardia ECG firmware: ASCII ECG samples on the nRF8001 UART service",
    settings: [sampleRateSetting.spec, heartRate.spec, noise.spec],
    streams: [StreamSpec("ecg", unit: "mV", help: "the ECG amplitude, one notification per sample")],
    clientSettings: [connectTimeout.spec, reconnect.spec, window.spec, kardiaRelay.spec],
    metrics: ["heart-rate", "relay-heart-rate", "relay-ble-disconnects-heard"],
    events: ["arrhythmia", "abnormal-episode"])

  public let device: DeviceSpec
  let board: BlendMicro
  let sampleRate: Double

  public var model: any PeripheralModel { board }

  public init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError) {
    self.device = device
    sampleRate = device.settings[Self.sampleRateSetting]
    let seed = signals.seed(device: device.id, stream: "ecg")
    var ecg = SyntheticECG(
      sampleRate: sampleRate, heartRate: device.settings[Self.heartRate], noise: device.settings[Self.noise],
      seed: seed)
    var source: (any SignalSource)?
    switch device.streams["ecg"] {
    case .ecg(let heartRate, let noise, let arrhythmia, let ownSeed):
      // The board's own synthetic ECG, computed a second ahead.
      ecg = SyntheticECG(
        sampleRate: sampleRate, heartRate: heartRate, noise: noise, arrhythmiaEpisodes: arrhythmia,
        seed: ownSeed ?? seed)
    case let spec?:
      source = try signals.make(spec, for: device, stream: "ecg", sampleRate: sampleRate)
    case nil:
      break
    }
    board = BlendMicro(name: device.name ?? "BlendMicro", ecg: ecg, source: source)
  }

  public func setSource(_ source: any SignalSource, for stream: String) async {
    await board.setSource(source)
  }

  public func sampleRate(of stream: String) -> Double { sampleRate }

  public func perform(_ action: String, arguments: [String: SettingValue]) async throws -> [ScenarioAction] {
    throw ScenarioError(.unknownReference, file: "", line: 0, column: 0, "a blend-micro has no action '\(action)'")
  }

  public func runClient(_ context: ClientContext) async {
    var relay: KardiaRelayRun?
    if device.client[Self.kardiaRelay] {
      do {
        // The server starts on threads of its own and takes no scenario
        // time: in virtual time the clock waits for it.
        let id = device.id
        let observer = context.observer
        relay = try await context.outsideRunTime { try await KardiaRelayRun.start(device: id, observer: observer) }
      } catch {
        context.observer.error("kardia relay: the analysis server did not start: \(error)", device: device.id)
      }
    }
    await receive(context, relay: relay)
    // The run is over: the server answers what was relayed before it stops.
    await relay?.finish()
  }

  /// The client proper: connects, reports what arrives and reconnects, until
  /// cancelled; samples also go to `relay`, timed on the board's schedule
  /// (sample n at n / rate, counted over every connection of the run), as
  /// BLE delivers notifications in bursts.
  private func receive(_ context: ClientContext, relay: KardiaRelayRun?) async {
    let timeout = device.client[Self.connectTimeout]
    let id = device.id
    let observer = context.observer
    let samples = ECGReceiver(
      window: ECGWindow(seconds: device.client[Self.window].seconds, sampleRate: sampleRate), relay: relay,
      sampleRate: sampleRate)
    let session = ClientSession(device: id, context: context, reconnect: device.client[Self.reconnect])
    await session.run(
      connect: {
        let client = BlendMicroClient(link: context.link, clock: context.clock)
        try await client.connect(namePrefix: device.name, timeout: timeout)
        return client
      },
      serve: { client in
        // However the link ends, the app tells the server the board is gone.
        defer { relay?.bleDisconnected() }
        try await client.receiveReadings { reading in
          switch reading {
          case .sample(let sample):
            observer.sample(sample.amplitude, stream: "ecg", device: id)
            if let result = samples.take(sample) {
              if let rate = result.heartRate { observer.metric("heart-rate", rate, device: id) }
              if result.freshArrhythmia { observer.event("arrhythmia", device: id) }
            }
          case .malformed(let bytes, _):
            observer.event("malformed", device: id, detail: "\(bytes.count) bytes")
          }
        }
      },
      close: { client in await client.disconnect() })
  }
}

/// What the client does with each sample, on the link's own thread or task
/// (every reading passes here): relays it to the analysis server, timed on
/// the board's schedule (sample n at n / rate, counted over every connection
/// of the run, as BLE delivers notifications in bursts), and adds it to the
/// heart-rate window.
final class ECGReceiver: Sendable {
  private let state: Mutex<(relayed: Int, window: ECGWindow)>
  private let relay: KardiaRelayRun?
  private let sampleRate: Double

  init(window: ECGWindow, relay: KardiaRelayRun?, sampleRate: Double) {
    state = Mutex((0, window))
    self.relay = relay
    self.sampleRate = sampleRate
  }

  /// Takes a sample; once a second, the window's heart rate and whether a
  /// new arrhythmia episode starts.
  func take(_ sample: ECGSample) -> (heartRate: Double?, freshArrhythmia: Bool)? {
    state.withLock { state in
      if let relay {
        relay.relay(
          ECGSample(time: .seconds(Double(state.relayed) / sampleRate), amplitude: sample.amplitude, text: sample.text))
        state.relayed += 1
      }
      return state.window.add(sample.amplitude)
    }
  }
}

/// The last seconds of ECG, analysed once a second as the Kardia server did.
struct ECGWindow {
  let sampleRate: Double
  /// The window's length in samples.
  private let length: Int
  private var stream: StreamingHeartRateAnalysis
  private var sinceAnalysis = 0
  private var lastStatus = HeartRateAnalysis.Status.insufficientData

  init(seconds: Double, sampleRate: Double) {
    self.sampleRate = sampleRate
    length = max(1, Int(seconds * sampleRate))
    stream = StreamingHeartRateAnalysis(sampleRate: sampleRate, capacity: length)
  }

  /// Adds a sample; once a second, the analysis of the window and whether it
  /// starts a new arrhythmia episode.
  mutating func add(_ amplitude: Double) -> (heartRate: Double?, freshArrhythmia: Bool)? {
    stream.append(amplitude)
    sinceAnalysis += 1
    guard sinceAnalysis >= Int(sampleRate) else { return nil }
    sinceAnalysis = 0
    let analysis = stream.analysis(ofLast: length)
    let fresh = analysis.status == .arrhythmia && lastStatus != .arrhythmia
    if analysis.status != .insufficientData { lastStatus = analysis.status }
    return (analysis.heartRate, fresh)
  }
}
