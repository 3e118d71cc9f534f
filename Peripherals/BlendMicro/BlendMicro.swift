import GATT
import Signals

/// A RedBearLabs Blend Micro running the Kardia ECG firmware: the nRF8001
/// UART service, Device Information, and an ECG streamed as ASCII decimal
/// text, one amplitude (mV) per notification, while a central is subscribed
/// to UART TX. Writes to UART RX are accepted and kept (the firmware's
/// commands are not public).
public actor BlendMicro: PeripheralModel {
  public static let uartService: BluetoothUUID = "713D0000-503E-4C75-BA94-3148F18D941E"
  public static let uartTX: BluetoothUUID = "713D0002-503E-4C75-BA94-3148F18D941E"
  public static let uartRX: BluetoothUUID = "713D0003-503E-4C75-BA94-3148F18D941E"
  public static let tx = CharacteristicAddress(service: uartService, characteristic: uartTX)
  public static let rx = CharacteristicAddress(service: uartService, characteristic: uartRX)
  /// The most the nRF8001 takes in one packet.
  public static let maximumPayload = 20

  public nonisolated let profile: GATTProfile
  public nonisolated let advertisement: AdvertisementData
  public nonisolated let ecg: SyntheticECG

  private let samples: ECGStream
  private var host: (any PeripheralHost)?
  private var stream: Task<Void, Never>?
  /// What centrals wrote to UART RX, in order.
  public private(set) var received: [[UInt8]] = []
  /// Samples sent so far.
  public var samplesSent: Int { samples.samplesSent }

  /// - Parameters:
  ///   - name: the GAP name (10 characters at most, as the nRF8001 allows).
  ///   - ecg: the synthetic ECG sent, and the sample rate of any source.
  ///   - source: a signal to send instead of `ecg` (a recording, a sine…),
  ///     sampled at `ecg.sampleRate`; streaming stops when it ends.
  public init(name: String = "BlendMicro", ecg: SyntheticECG = SyntheticECG(), source: (any SignalSource)? = nil) {
    self.ecg = ecg
    self.samples = ECGStream(ecg: ecg, source: source)
    self.advertisement = AdvertisementData(localName: String(name.prefix(10)), serviceUUIDs: [Self.uartService])
    // The definitions are fixed and valid; a failure here is a programming error.
    self.profile = try! GATTProfile([
      ServiceDefinition(
        Self.uartService, name: "UART",
        characteristics: [
          CharacteristicDefinition(
            Self.uartTX, name: "UART TX", properties: [.notify], maximumLength: Self.maximumPayload),
          CharacteristicDefinition(
            Self.uartRX, name: "UART RX", properties: [.writeWithoutResponse], maximumLength: Self.maximumPayload),
        ]),
      ServiceDefinition(
        BluetoothUUID(0x180A), name: "Device Information",
        characteristics: [
          CharacteristicDefinition(
            BluetoothUUID(0x2A27), name: "Hardware Revision", properties: [.read],
            initialValue: Array("Blend Micro 1.0".utf8))
        ]),
    ])
  }

  public func start(host: any PeripheralHost) async { self.host = host }

  /// Sends `source` from the next sample on, at the ECG's sample rate.
  public func setSource(_ source: any SignalSource) {
    samples.setSource(source)
  }

  public func stop() async {
    stream?.cancel()
    stream = nil
  }

  public func subscriptionChanged(characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool) async {
    guard characteristic == Self.tx, let host else { return }
    let anyone = !(await host.subscribers(of: Self.tx)).isEmpty
    if anyone, stream == nil {
      let samples = self.samples
      stream = Task(executorPreference: Task.currentExecutorPreference) {
        await Self.stream(samples, to: host, timeline: DeviceTimeline(host.clock))
      }
    } else if !anyone {
      stream?.cancel()
      stream = nil
    }
  }

  public func write(characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID)
    async throws(ATTError)
  {
    guard characteristic == Self.rx else { throw .writeNotPermitted }
    guard value.count <= Self.maximumPayload else { throw .invalidAttributeValueLength }
    received.append(value)
  }

  /// Sends samples on a drift-free schedule: sample n at start + n / rate,
  /// continuing the sequence where an earlier stream left it. Runs off the
  /// actor, on the stream task's executor: a sample takes no switch to the
  /// actor and back.
  @concurrent private static func stream(
    _ samples: ECGStream, to host: any PeripheralHost, timeline: DeviceTimeline
  ) async {
    let period = Duration.seconds(1 / samples.ecg.sampleRate)
    // Sample n at start + n × period: added up exactly (a duration is whole
    // attoseconds), without a 128-bit product per sample.
    var deadline = timeline.elapsed()
    await timeline.repeatedly(from: deadline) {
      guard let (index, value) = samples.next() else { return nil }
      let text = SyntheticECG.utf8Text(value)
      do throws(GATTError) {
        // Without an await when the host can send it now: each await costs
        // the tick two switches of executor.
        if try !host.notifyAtOnce(text, characteristic: Self.tx) {
          try await host.notify(text, characteristic: Self.tx)
        }
        samples.sent(index)
      } catch {
        // Nobody listens any more: the stream ends; any other failure loses this sample.
        if error.code == .noSubscribers || error.code == .notConnected { return nil }
      }
      deadline += period
      return deadline
    }
  }
}
