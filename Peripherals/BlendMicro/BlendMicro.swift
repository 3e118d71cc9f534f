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

  /// What the ECG stream carries when a scenario replaces the synthetic ECG.
  private var source: (any SignalSource)?
  private var host: (any PeripheralHost)?
  private var stream: Task<Void, Never>?
  private var nextSample = 0
  /// Samples computed ahead, one second at a time, starting at `bufferStart`.
  private var buffer: [Double] = []
  private var bufferStart = 0
  /// Where the synthetic ECG's beats stand after the buffer.
  private var beats = SyntheticECG.BeatCursor.start
  /// What centrals wrote to UART RX, in order.
  public private(set) var received: [[UInt8]] = []
  /// Samples sent so far.
  public var samplesSent: Int { nextSample }

  /// - Parameters:
  ///   - name: the GAP name (10 characters at most, as the nRF8001 allows).
  ///   - ecg: the synthetic ECG sent, and the sample rate of any source.
  ///   - source: a signal to send instead of `ecg` (a recording, a sine…),
  ///     sampled at `ecg.sampleRate`; streaming stops when it ends.
  public init(name: String = "BlendMicro", ecg: SyntheticECG = SyntheticECG(), source: (any SignalSource)? = nil) {
    self.ecg = ecg
    self.source = source
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
    self.source = source
  }

  public func stop() async {
    stream?.cancel()
    stream = nil
  }

  public func subscriptionChanged(characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool) async {
    guard characteristic == Self.tx, let host else { return }
    let anyone = !(await host.subscribers(of: Self.tx)).isEmpty
    if anyone, stream == nil {
      stream = Task(executorPreference: Task.currentExecutorPreference) { await self.streamECG(host) }
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
  /// continuing the sequence where an earlier stream left it.
  private func streamECG(_ host: any PeripheralHost) async {
    await Self.run(host: host, clock: host.clock, model: self)
  }

  private static func run<C: Clock<Duration>>(host: any PeripheralHost, clock: C, model: BlendMicro) async {
    let period = Duration.seconds(1 / model.ecg.sampleRate)
    let start = clock.now
    var sent = 0
    while !Task.isCancelled {
      let deadline = start.advanced(by: period * sent)
      do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
      guard await model.sendNext(host) else { return }
      sent += 1
    }
  }

  /// Sends the next sample; `false` when nobody listens any more.
  private func sendNext(_ host: any PeripheralHost) async -> Bool {
    let n = nextSample
    let value: Double
    if var source {
      guard let next = source.value(at: Double(n) / ecg.sampleRate) else { return false }
      self.source = source
      value = next
    } else {
      value = synthetic(n)
    }
    do {
      try await host.notify(Array(SyntheticECG.text(value).utf8), characteristic: Self.tx)
      nextSample = n + 1
      return true
    } catch {
      return error.code != .noSubscribers && error.code != .notConnected
    }
  }

  /// Sample `n` of the synthetic ECG, computed a second ahead.
  private func synthetic(_ n: Int) -> Double {
    if n < bufferStart || n >= bufferStart + buffer.count {
      bufferStart = n
      buffer = ecg.samples(n..<(n + max(1, Int(ecg.sampleRate))), from: &beats)
    }
    return buffer[n - bufferStart]
  }
}
