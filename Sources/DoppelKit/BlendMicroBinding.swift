import BlendMicro
import BlendMicroClient
import GATT
import Scenario
import Signals

/// The Blend Micro in scenarios: an ECG stream, and the Kardia-shaped client
/// that reports samples, malformed notifications, the heart rate and fresh
/// arrhythmia episodes.
public struct BlendMicroBinding: DeviceBinding {
  public static let description = DeviceDescription(
    model: "blend-micro",
    summary: "RedBearLabs Blend Micro with the Kardia ECG firmware: ASCII ECG samples on the nRF8001 UART service",
    settings: [
      SettingSpec("sample-rate", .number(1...1000), default: .number(100), help: "ECG samples per second"),
      SettingSpec(
        "heart-rate", .number(20...250), default: .number(72), help: "heart rate of the default synthetic ECG, bpm"),
      SettingSpec("noise", .number(0...10), default: .number(0.01), help: "noise of the default synthetic ECG, mV"),
    ],
    streams: [StreamSpec("ecg", unit: "mV", help: "the ECG amplitude, one notification per sample")],
    clientSettings: [
      SettingSpec("connect-timeout", .duration, default: .duration(.seconds(60)), help: "how long to scan and connect"),
      SettingSpec("reconnect", .flag, default: .flag(true), help: "connect again after a disconnect, as the app does"),
      SettingSpec("window", .duration, default: .duration(.seconds(10)), help: "ECG the heart rate is computed over"),
      SettingSpec(
        "kardia-relay", .flag, default: .flag(false),
        help:
          "relay the samples to a Kardia analysis server run in process (WebSocket on 127.0.0.1) and report its answers"
      ),
    ],
    metrics: ["heart-rate", "relay-heart-rate"],
    events: ["arrhythmia", "abnormal-episode"])

  public let device: DeviceSpec
  let board: BlendMicro
  let sampleRate: Double

  public var model: any PeripheralModel { board }

  public init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError) {
    self.device = device
    sampleRate = device.settings["sample-rate"]?.number ?? 100
    let seed = signals.seed(device: device.id, stream: "ecg")
    var ecg = SyntheticECG(
      sampleRate: sampleRate, heartRate: device.settings["heart-rate"]?.number ?? 72,
      noise: device.settings["noise"]?.number ?? 0.01, seed: seed)
    var source: (any SignalSource)?
    switch device.streams["ecg"] {
    case .ecg(let heartRate, let noise, let arrhythmia, let ownSeed):
      // The board's own synthetic ECG, computed a second ahead.
      ecg = SyntheticECG(
        sampleRate: sampleRate, heartRate: heartRate, noise: noise, arrhythmiaEpisodes: arrhythmia,
        seed: ownSeed ?? seed)
    case let spec?:
      source = try signals.make(spec, device: device.id, stream: "ecg", sampleRate: sampleRate)
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

  public func runClient(link: any CentralLink, clock: any Clock<Duration>, observer: ClientObserver) async {
    var relay: KardiaRelayRun?
    if device.client["kardia-relay"]?.flag == true {
      do {
        // The server starts on threads of its own and takes no scenario
        // time: in virtual time the clock waits for it.
        let id = device.id
        let start = { try await KardiaRelayRun.start(device: id, observer: observer) }
        if let virtual = clock as? VirtualClock {
          relay = try await virtual.holding(start)
        } else {
          relay = try await start()
        }
      } catch {
        observer.error("kardia relay: the analysis server did not start: \(error)", device: device.id)
      }
    }
    await receive(link: link, clock: clock, observer: observer, relay: relay)
    // The run is over: the server answers what was relayed before it stops.
    await relay?.finish()
  }

  /// The client proper: connects, reports what arrives and reconnects, until
  /// cancelled; samples also go to `relay`, timed on the board's schedule
  /// (sample n at n / rate, counted over every connection of the run), as
  /// BLE delivers notifications in bursts.
  private func receive(
    link: any CentralLink, clock: any Clock<Duration>, observer: ClientObserver, relay: KardiaRelayRun?
  )
    async
  {
    var relayed = 0
    let timeout = device.client["connect-timeout"]?.duration ?? .seconds(60)
    let reconnect = device.client["reconnect"]?.flag ?? true
    let window = device.client["window"]?.duration?.seconds ?? 10
    let id = device.id
    var analysis = ECGWindow(seconds: window, sampleRate: sampleRate)
    repeat {
      let client = BlendMicroClient(link: link, clock: clock)
      do {
        try await client.connect(namePrefix: device.name, timeout: timeout)
        observer.event("connected", device: id)
        for try await reading in try await client.readings() {
          switch reading {
          case .sample(let sample):
            observer.sample(sample.amplitude, stream: "ecg", device: id)
            if let relay {
              relay.relay(ECGSample(time: .seconds(Double(relayed) / sampleRate), amplitude: sample.amplitude))
              relayed += 1
            }
            if let result = analysis.add(sample.amplitude) {
              if let rate = result.heartRate { observer.metric("heart-rate", rate, device: id) }
              if result.freshArrhythmia { observer.event("arrhythmia", device: id) }
            }
          case .malformed(let bytes, _):
            observer.event("malformed", device: id, detail: "\(bytes.count) bytes")
          }
        }
        if Task.isCancelled {
          await client.disconnect()
          return
        }
        observer.event("disconnected", device: id)
      } catch {
        if Task.isCancelled {
          await client.disconnect()
          return
        }
        if let gatt = error as? GATTError, case .disconnected(let reason) = gatt.code {
          observer.event("disconnected", device: id, detail: "\(reason)")
        } else {
          observer.error("\(error)", device: id)
          // Do not spin on a persistent failure.
          try? await clock.sleep(for: .seconds(1))
        }
      }
    } while reconnect && !Task.isCancelled
  }
}

/// The last seconds of ECG, analysed once a second as the Kardia server did.
struct ECGWindow {
  let seconds: Double
  let sampleRate: Double
  private var amplitudes: [Double] = []
  private var sinceAnalysis = 0
  private var lastStatus = HeartRateAnalysis.Status.insufficientData

  init(seconds: Double, sampleRate: Double) {
    self.seconds = seconds
    self.sampleRate = sampleRate
  }

  /// Adds a sample; once a second, the analysis of the window and whether it
  /// starts a new arrhythmia episode.
  mutating func add(_ amplitude: Double) -> (heartRate: Double?, freshArrhythmia: Bool)? {
    amplitudes.append(amplitude)
    let capacity = Int(seconds * sampleRate)
    if amplitudes.count > capacity * 2 { amplitudes.removeFirst(amplitudes.count - capacity) }
    sinceAnalysis += 1
    guard sinceAnalysis >= Int(sampleRate) else { return nil }
    sinceAnalysis = 0
    let recent = amplitudes.suffix(capacity)
    let times = (0..<recent.count).map { Double($0) / sampleRate }
    let analysis = HeartRateAnalysis(times: times, amplitudes: Array(recent))
    let fresh = analysis.status == .arrhythmia && lastStatus != .arrhythmia
    if analysis.status != .insufficientData { lastStatus = analysis.status }
    return (analysis.heartRate, fresh)
  }
}
