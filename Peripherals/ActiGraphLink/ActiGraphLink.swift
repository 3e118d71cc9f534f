import GATT
import Signals

/// An emulated ActiGraph Link (GT9X) activity monitor on this project's
/// emulation profile (README.md): one service with a command characteristic
/// (write) and a response characteristic (notify) carrying framed messages
/// chunked to the ATT MTU.
///
/// It keeps a log of 60 s epochs generated from an activity pattern, sends
/// them on request in batches with download progress, streams raw
/// acceleration (256 LSB/g) at its configured rate from three
/// `SignalSource`s, and answers status requests. Device-side faults a
/// scenario can trigger: a transfer error part-way through a download, a
/// refused configuration, and being busy (any command during a download).
public actor ActiGraphLink: PeripheralModel {
  /// The emulation profile's service (this project's UUID).
  public static let service = BluetoothUUID(high: 0x5A6C_0001_7E3A_4B8D, low: 0x9F21_AC7A_61A4_E000)
  /// Commands from the central (write).
  public static let command = CharacteristicAddress(
    service: service, characteristic: BluetoothUUID(high: 0x5A6C_0002_7E3A_4B8D, low: 0x9F21_AC7A_61A4_E000))
  /// Responses and data to the central (notify).
  public static let response = CharacteristicAddress(
    service: service, characteristic: BluetoothUUID(high: 0x5A6C_0003_7E3A_4B8D, low: 0x9F21_AC7A_61A4_E000))
  /// Raw acceleration resolution (GT3X file format: 256 LSB/g).
  public static let rawCountsPerG = 256.0

  public nonisolated let profile: GATTProfile
  public nonisolated let advertisement: AdvertisementData
  public nonisolated let configuration: ActiGraphLinkConfiguration

  private var sources: [any SignalSource]
  private var sourceOrigin: Duration = .zero
  private var host: (any PeripheralHost)?
  private var timeline: Stopwatch?
  private var connected: [CentralID] = []
  private var assembler = LinkMessageAssembler()
  /// Whether a message is being sent, and who waits to send: messages go out whole, one at a time.
  private var sending = false
  private var waitingToSend: [CheckedContinuation<Void, Never>] = []
  private var rawTask: Task<Void, Never>?
  private var downloadTask: Task<Void, Never>?
  private var transferErrorPercent: Int?
  private var refusingConfiguration = false
  private var sdkAccessDisabled = false

  /// Battery level, 0…1.
  public private(set) var batteryLevel: Double
  /// Whether raw acceleration is streaming.
  public private(set) var isStreamingRaw = false
  /// IMU flags last configured (`LinkMessage.IMUFlag` bits).
  public private(set) var imuFlags: UInt8 = 0
  /// Whether an epoch download is under way.
  public var isDownloading: Bool { downloadTask != nil }
  /// Epoch records sent in all downloads.
  public private(set) var epochRecordsSent = 0
  /// Raw samples sent.
  public private(set) var rawSamplesSent = 0
  /// Results of every command answered, in order (for tests).
  public private(set) var answers: [LinkMessage.Result] = []

  /// - Parameters:
  ///   - configuration: identity, clock, log and rate.
  ///   - accelerationX, accelerationY, accelerationZ: raw acceleration in g
  ///     (the default: a monitor lying flat, 1 g along z).
  public init(
    configuration: ActiGraphLinkConfiguration = ActiGraphLinkConfiguration(),
    accelerationX: any SignalSource = ConstantSignal(0),
    accelerationY: any SignalSource = ConstantSignal(0),
    accelerationZ: any SignalSource = ConstantSignal(1)
  ) {
    self.configuration = configuration
    sources = [accelerationX, accelerationY, accelerationZ]
    batteryLevel = configuration.batteryLevel
    transferErrorPercent = configuration.transferErrorAt
    refusingConfiguration = configuration.refusesConfiguration
    sdkAccessDisabled = configuration.sdkAccessDisabled
    advertisement = AdvertisementData(localName: configuration.serialNumber, serviceUUIDs: [Self.service])
    // Fixed, valid definitions: a failure is a programming error.
    profile = try! GATTProfile([
      ServiceDefinition(
        Self.service, name: "ActiGraph Link (emulation profile)",
        characteristics: [
          CharacteristicDefinition(
            Self.command.characteristic, name: "Command", properties: [.write, .writeWithoutResponse],
            maximumLength: 64),
          CharacteristicDefinition(Self.response.characteristic, name: "Response", properties: [.notify]),
        ])
    ])
  }

  // MARK: The log

  /// Unix time of the first logged epoch.
  public nonisolated var logStart: UInt32 {
    let start = configuration.clockTime - configuration.logHours * 3600
    return UInt32(max(0, (start / 60).rounded(.up) * 60))
  }

  /// Number of logged epochs.
  public nonisolated var logCount: Int { Int(configuration.logHours * 60) }

  /// Logged epoch `index` (0 ..< logCount).
  public nonisolated func epoch(_ index: Int) -> EpochRecord {
    let timestamp = logStart + UInt32(index * 60)
    return configuration.activity.epoch(
      index: Int(timestamp / 60), timestamp: timestamp, seed: configuration.seed)
  }

  /// The logged epochs from `start` to `stop` (Unix seconds, both inclusive).
  public nonisolated func epochs(from start: UInt32, to stop: UInt32) -> [EpochRecord] {
    indices(from: start, to: stop).map(epoch)
  }

  private nonisolated func indices(from start: UInt32, to stop: UInt32) -> Range<Int> {
    guard start <= stop else { return 0..<0 }
    let first = max(0, Int((Int64(start) - Int64(logStart) + 59) / 60))
    let last = min(logCount - 1, Int((Int64(stop) - Int64(logStart)) >= 0 ? (Int64(stop) - Int64(logStart)) / 60 : -1))
    return first <= last ? first..<(last + 1) : 0..<0
  }

  /// The device clock now (Unix seconds).
  public var deviceTime: Double { configuration.clockTime + now().seconds }

  // MARK: What scenarios trigger

  /// The next download fails with a transfer error after `percent` % of its records.
  public func failNextDownload(atPercent percent: Int) { transferErrorPercent = min(max(percent, 0), 100) }

  /// While on, every configuration command is refused as invalid.
  public func refuseConfigurations(_ refusing: Bool) { refusingConfiguration = refusing }

  /// While on, every command (get status too) is refused with "access disabled".
  public func disableSDKAccess(_ disabled: Bool) { sdkAccessDisabled = disabled }

  /// Sets the battery level, 0…1.
  public func setBattery(_ level: Double) { batteryLevel = min(max(level, 0), 1) }

  /// Replaces the source of one axis (0 x, 1 y, 2 z), from now on.
  public func setSource(_ source: any SignalSource, axis: Int) {
    guard sources.indices.contains(axis) else { return }
    sources[axis] = source
  }

  // MARK: PeripheralModel

  public func start(host: any PeripheralHost) async {
    self.host = host
    timeline = Stopwatch(host.clock)
    sourceOrigin = .zero
  }

  public func stop() async {
    stopActivity()
    host = nil
  }

  public func centralConnected(_ central: CentralID) async {
    connected.append(central)
  }

  public func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async {
    connected.removeAll { $0 == central }
    if connected.isEmpty {
      stopActivity()
      assembler.reset()
    }
  }

  public func write(
    characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID
  ) async throws(ATTError) {
    guard characteristic == Self.command else { throw .writeNotPermitted }
    for message in assembler.add(value) { await handle(message) }
    // No request carries more than a few bytes: a header announcing more is
    // garbage, answered at once instead of waiting for kilobytes that never come.
    if let header = assembler.pendingHeader, header.length > Self.maximumRequestPayload {
      assembler.reset()
      await answer(header.kind, .invalidConfiguration)
    }
  }

  /// The longest request payload the firmware takes (`download-epochs` has 8 bytes).
  public static let maximumRequestPayload = 64

  // MARK: Commands

  private func handle(_ message: LinkMessage) async {
    guard let kind = LinkMessage.Kind(rawValue: message.kind) else {
      await answer(message.kind, .invalidConfiguration)
      return
    }
    guard !sdkAccessDisabled else {
      await answer(message.kind, .accessDisabled)
      return
    }
    if kind != .getStatus, isDownloading {
      await answer(message.kind, .busy)
      return
    }
    switch kind {
    case .getStatus:
      host?.firmwareEvent(Self.requestName(kind), detail: "answered")
      await post(LinkMessage(.status, statusPayload()))
    case .setRawStream:
      guard !refusingConfiguration, message.payload.count == 1, message.payload[0] <= 1 else {
        await answer(message.kind, .invalidConfiguration)
        return
      }
      await answer(message.kind, .ok)
      message.payload[0] == 1 ? startRaw() : stopRaw()
    case .setIMU:
      guard !refusingConfiguration, message.payload.count == 1, message.payload[0] <= 0x0F else {
        await answer(message.kind, .invalidConfiguration)
        return
      }
      imuFlags = message.payload[0]
      await answer(message.kind, .ok)
    case .downloadEpochs:
      guard !refusingConfiguration, let start = ByteReader.uint32(in: message.payload, at: 0),
        let stop = ByteReader.uint32(in: message.payload, at: 4), message.payload.count == 8
      else {
        await answer(message.kind, .invalidConfiguration)
        return
      }
      guard start <= stop else {
        await answer(message.kind, .dateError)
        return
      }
      let range = indices(from: start, to: stop)
      guard !range.isEmpty else {
        await answer(message.kind, .noData)
        return
      }
      await answer(message.kind, .ok)
      await startDownload(range)
    default:
      await answer(message.kind, .invalidConfiguration)
    }
  }

  private func answer(_ command: UInt8, _ result: LinkMessage.Result) async {
    answers.append(result)
    let request = LinkMessage.Kind(rawValue: command).map(Self.requestName) ?? "unknown-request"
    host?.firmwareEvent(request, detail: "\(result)")
    await post(LinkMessage(.acknowledge, [command, result.rawValue]))
  }

  /// A request's name in device-side observations (`firmware-event`).
  static func requestName(_ kind: LinkMessage.Kind) -> String {
    switch kind {
    case .getStatus: "get-status"
    case .setRawStream: "set-raw-stream"
    case .setIMU: "set-imu"
    case .downloadEpochs: "download-epochs"
    default: "unknown-request"
    }
  }

  /// The names ``requestName(_:)`` gives.
  public static let requestNames = ["get-status", "set-raw-stream", "set-imu", "download-epochs", "unknown-request"]

  private func statusPayload() -> [UInt8] {
    var payload = ByteWriter([UInt8((batteryLevel * 100).rounded())])
    payload.append(UInt32(max(0, deviceTime)))
    payload.append(logStart)
    payload.append(UInt32(logCount))
    payload.append(contentsOf: [UInt8(configuration.rawRate), isStreamingRaw ? 1 : 0, imuFlags])
    payload.append(contentsOf: configuration.serialNumber.utf8)
    return payload.bytes
  }

  // MARK: Epoch download

  private func startDownload(_ range: Range<Int>) async {
    let failAt = transferErrorPercent
    transferErrorPercent = nil
    var header = ByteWriter()
    header.append(UInt32(range.count))
    header.append(epoch(range.lowerBound).timestamp)
    await post(LinkMessage(.downloadHeader, header.bytes))
    downloadTask = Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
      await self?.download(range, failAt: failAt)
    }
  }

  private func download(_ range: Range<Int>, failAt: Int?) async {
    guard let host else { return }
    let limit = failAt.map { range.count * $0 / 100 }
    var index = range.lowerBound
    while index < range.upperBound, !Task.isCancelled {
      let perBatch = max(1, min(255, (chunkSize() - LinkMessage.headerLength - 5) / EpochRecord.wireLength))
      var end = min(range.upperBound, index + perBatch)
      if let limit { end = min(end, range.lowerBound + limit) }
      if end <= index { break }
      var payload = ByteWriter()
      payload.append(UInt32(index - range.lowerBound))
      payload.append(UInt8(end - index))
      for i in index..<end { payload.append(contentsOf: epoch(i).wireBytes) }
      await post(LinkMessage(.epochBatch, payload.bytes))
      epochRecordsSent += end - index
      index = end
      do { try await host.clock.sleep(for: configuration.batchInterval) } catch { return }
    }
    guard !Task.isCancelled else { return }
    let failed = index < range.upperBound
    await post(LinkMessage(.downloadEnd, [failed ? LinkMessage.Result.transferError.rawValue : 0]))
    downloadTask = nil
  }

  // MARK: Raw streaming

  private func startRaw() {
    guard !isStreamingRaw else { return }
    isStreamingRaw = true
    rawTask = Task(executorPreference: Task.currentExecutorPreference) { [weak self] in await self?.streamRaw() }
  }

  private func stopRaw() {
    isStreamingRaw = false
    rawTask?.cancel()
    rawTask = nil
  }

  private func streamRaw() async {
    guard let host else { return }
    let rate = configuration.rawRate
    let perBatch = rate / 10
    let started = now()
    let startTime = configuration.clockTime + (started).seconds
    var sample = 0
    while !Task.isCancelled {
      let due = started + .milliseconds(100 * (sample / perBatch + 1))
      do { try await host.clock.sleep(for: due - now()) } catch { return }
      guard isStreamingRaw else { return }
      let time = startTime + Double(sample) / Double(rate)
      var payload = ByteWriter(capacity: 8 + 6 * perBatch)
      payload.append(UInt32(time))
      payload.append(UInt16((time - time.rounded(.down)) * 1000))
      payload.append(contentsOf: [UInt8(rate), UInt8(perBatch)])
      for n in 0..<perBatch {
        let t = (started - sourceOrigin).seconds + Double(sample + n) / Double(rate)
        for axis in 0..<3 {
          let g = sources[axis].value(at: t) ?? 0
          let code = Int16(clamping: Int((g * Self.rawCountsPerG).rounded()))
          payload.append(code)
        }
      }
      sample += perBatch
      rawSamplesSent += perBatch
      await post(LinkMessage(.rawBatch, payload.bytes))
    }
  }

  private func stopActivity() {
    stopRaw()
    downloadTask?.cancel()
    downloadTask = nil
  }

  // MARK: Sending

  /// Sends a message whole, after any message being sent.
  private func post(_ message: LinkMessage) async {
    if sending {
      await withCheckedContinuation { waitingToSend.append($0) }
    }
    sending = true
    await send(message)
    if waitingToSend.isEmpty {
      sending = false
    } else {
      waitingToSend.removeFirst().resume()
    }
  }

  private var negotiatedChunk = 20

  private func chunkSize() -> Int { negotiatedChunk }

  public func mtuChanged(_ mtu: Int, central: CentralID) async {
    negotiatedChunk = max(20, mtu - 3)
  }

  /// Sends a message in chunks of the smallest subscriber's ATT_MTU − 3.
  /// A central that is connected but whose subscription the host has not
  /// reported yet (BlueZ tells the application a moment after the CCCD
  /// write; on a loaded lab machine over a second later) is waited for, up
  /// to five seconds; a chunk refused as too long is sent again in 20-byte
  /// chunks.
  private func send(_ message: LinkMessage) async {
    guard let host else { return }
    var subscribers = await host.subscribers(of: Self.response)
    var waited = 0
    while subscribers.isEmpty, !connected.isEmpty, waited < 250 {
      do { try await host.clock.sleep(for: .milliseconds(20)) } catch { return }
      waited += 1
      subscribers = await host.subscribers(of: Self.response)
    }
    var size = Int.max
    for central in subscribers {
      if let mtu = await host.mtu(for: central) { size = min(size, mtu - 3) }
    }
    guard size != Int.max else { return }
    negotiatedChunk = size
    let bytes = message.bytes
    var offset = 0
    while offset < bytes.count {
      let chunk = Array(bytes[offset..<min(offset + size, bytes.count)])
      do {
        // Without an await when the host can send it now (two switches of executor saved).
        if try !host.notifyAtOnce(chunk, characteristic: Self.response) {
          try await host.notify(chunk, characteristic: Self.response)
        }
        offset += chunk.count
      } catch  where error.code == .valueTooLong && size > 20 {
        size = 20
      } catch {
        return
      }
    }
  }

  private func now() -> Duration { timeline?() ?? .zero }

}
