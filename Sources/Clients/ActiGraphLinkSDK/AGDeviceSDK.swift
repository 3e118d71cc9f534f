import Foundation
import GATT
import Synchronization

/// The ActiGraph Link SDK's shape (`AGDeviceSDK`): scan for Link monitors by
/// serial number, connect to one found in a scan, configure it with JSON
/// (raw streaming, IMU sensors, epoch download) and receive everything as
/// the SDK's JSON strings, to its `delegate` (`AGDeviceSDKDelegate`) and on
/// `messages`, with typed values beside them.
///
/// Like the SDK, the methods report outcomes, errors included, as messages:
/// `{"error": {"code", "description", "extra"}}`; none throws.
public actor AGDeviceSDK {
  /// Every message, in order: what the SDK's delegate receives, typed.
  public nonisolated let messages: AsyncStream<AGMessage>
  private let delegateReference = Mutex(WeakDelegate())
  private let output: AsyncStream<AGMessage>.Continuation
  private let link: any CentralLink
  private let clock: any Clock<Duration>

  private var found: [String: PeripheralID] = [:]
  private var foundOrder: [String] = []
  private var enumeration: Task<Void, Never>?
  private var enumerationGeneration = 0
  private var connection: (any CentralConnection)?
  private var connectedSerial: String?
  private var connecting = false
  private var reader: Task<Void, Never>?
  private var assembler = AGAssembler()
  private var pending: [Pending] = []
  private var download: Download?
  private var rawRate = 0

  /// A command waiting for the device's acknowledgement.
  private enum Pending {
    case raw(Bool)
    case imu
    case epoch(start: String, stop: String)
    case status

    var command: AGWire.Kind {
      switch self {
      case .raw: .setRawStream
      case .imu: .setIMU
      case .epoch: .downloadEpochs
      case .status: .getStatus
      }
    }
  }

  private struct Download {
    var start: String
    var stop: String
    var total = 0
    var firstTimestamp: Int64 = 0
    var records: [AGEpoch] = []
    var lastProgress = 0
  }

  private struct WeakDelegate: Sendable {
    weak var value: (any AGDeviceSDKDelegate)?
  }

  /// An SDK on `link`, timing its scans with `clock`.
  public init(link: any CentralLink, clock: any Clock<Duration>) {
    self.link = link
    self.clock = clock
    (messages, output) = AsyncStream<AGMessage>.makeStream()
  }

  /// `initWithDelegate:`: an SDK on `link` that tells `delegate` every message.
  public init(
    delegate: any AGDeviceSDKDelegate, link: any CentralLink, clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.init(link: link, clock: clock)
    self.delegate = delegate
  }

  /// The SDK's `delegate` (held weakly, as the SDK's property): told every
  /// message from now on. Set it again when handing the SDK to another object.
  public nonisolated var delegate: (any AGDeviceSDKDelegate)? {
    get { delegateReference.withLock { $0.value } }
    set { delegateReference.withLock { $0.value = newValue } }
  }

  /// Ends `messages` (after what was delivered so far); the SDK is done.
  public func finish() {
    enumeration?.cancel()
    output.finish()
  }

  private func emit(_ value: AGDeviceData) {
    let message = AGMessage(value)
    if let delegate {
      if message.isStatus { delegate.onDeviceStatus(message.json) } else { delegate.onDeviceData(message.json) }
    }
    output.yield(message)
  }
  private func fail(_ code: AGErrorCode, _ extra: String = "") { emit(.error(AGError(code, extra: extra))) }

  // MARK: Scanning

  /// `enumerateDevices` and `enumerateDevices:`: scans for Link monitors for
  /// `duration` seconds (10 by default): `{"device"}` for each one found,
  /// then `{"devices"}` with every serial found. Code 2 when a scan is
  /// already under way.
  public func enumerateDevices(_ duration: Double = 10) {
    guard enumeration == nil else {
      fail(.enumerationInProgress)
      return
    }
    enumerationGeneration += 1
    let generation = enumerationGeneration
    let stream = link.scan(filter: ScanFilter(serviceUUIDs: [AGWire.service]))
    let clock = self.clock
    enumeration = Task(executorPreference: Task.currentExecutorPreference) {
      let scan = Task(executorPreference: Task.currentExecutorPreference) {
        for await peripheral in stream {
          guard let name = peripheral.name, name.hasPrefix("TAS") else { continue }
          await self.found(name, peripheral.id)
        }
      }
      try? await clock.sleep(for: .milliseconds(Int64(max(0, duration) * 1000)))
      scan.cancel()
      await self.endEnumeration(generation)
    }
  }

  /// Whether a scan is under way.
  public var isEnumerating: Bool { enumeration != nil }

  /// The serial numbers every scan so far found, in the order first found.
  public var foundDevices: [String] { foundOrder }

  /// Stops a scan: `{"devices"}` with what was found so far.
  public func cancelEnumeration() {
    guard let task = enumeration else { return }
    task.cancel()
    endEnumeration(enumerationGeneration)
  }

  private func found(_ serial: String, _ id: PeripheralID) {
    guard enumeration != nil else { return }
    let isNew = found[serial] == nil
    found[serial] = id
    if isNew {
      foundOrder.append(serial)
      emit(.deviceFound(serial))
    }
  }

  private func endEnumeration(_ generation: Int) {
    guard generation == enumerationGeneration, enumeration != nil else { return }
    enumeration = nil
    emit(.devices(foundOrder))
  }

  // MARK: Connection

  /// Connects to a monitor found in a scan: `{"deviceConnected"}`. Code 10
  /// when a device is already connected, 1 for a serial no scan found, 5 when
  /// the connection fails, 9 when the device is not a Link.
  public func connectToDevice(_ serial: String) async {
    guard connectedSerial == nil, !connecting else {
      fail(.existingConnection, connectedSerial ?? serial)
      return
    }
    guard let id = found[serial] else {
      fail(.deviceNotFound, serial)
      return
    }
    connecting = true
    defer { connecting = false }
    let connection: any CentralConnection
    do {
      connection = try await link.connect(id, timeout: .seconds(15))
    } catch {
      fail(.connectionFailed, "\(error)")
      return
    }
    do {
      let services = try await connection.discoverServices()
      guard services.contains(where: { $0.uuid == AGWire.service }) else {
        await connection.disconnect()
        fail(.invalidDevice, serial)
        return
      }
      let notifications = try await connection.notifications(of: AGWire.response)
      self.connection = connection
      connectedSerial = serial
      assembler = AGAssembler()
      pending = []
      download = nil
      let events = connection.events()
      reader = Task(executorPreference: Task.currentExecutorPreference) {
        do {
          for try await chunk in notifications { await self.receive(chunk) }
        } catch {}
        _ = events
        await self.linkEnded(connection)
      }
      emit(.deviceConnected(serial))
    } catch {
      await connection.disconnect()
      fail(.connectionFailed, "\(error)")
    }
  }

  /// Disconnects the connected device: `{"deviceDisconnected"}`. With none
  /// connected it does nothing ("if it is connected").
  public func disconnectFromDevice() async {
    guard let connection else { return }
    await connection.disconnect()
    // What the device sent before the disconnect is still delivered.
    await reader?.value
    linkEnded(connection)
  }

  private func linkEnded(_ ended: any CentralConnection) {
    guard let connection, connection.peripheral == ended.peripheral, let serial = connectedSerial else { return }
    if download != nil { fail(.epochDownloadError, "the link ended during the download") }
    self.connection = nil
    connectedSerial = nil
    download = nil
    pending = []
    reader = nil
    emit(.deviceDisconnected(serial))
  }

  /// The connected device's serial number; `nil` when none is connected.
  public func getConnectedDevice() -> String? { connectedSerial }

  /// Requests the connected device's status: `{"status"}` to the delegate's
  /// `onDeviceStatus(_:)`; code 0 when none is connected, 4 when the device's
  /// SDK access is switched off.
  public func getDeviceStatus() async {
    guard connection != nil else {
      fail(.noDeviceConnected)
      return
    }
    pending.append(.status)
    await send(.getStatus)
  }

  // MARK: Configuration

  /// Checks a configuration JSON as `configureDevice(_:)` does, without a
  /// device: `nil` when it is a request the SDK understands, else the error
  /// `configureDevice` would report (code 3, or 8 for a bad date).
  public nonisolated static func check(configuration json: String) -> AGError? {
    if case .failure(let error) = AGConfigurationRequest.parse(json) { return error }
    return nil
  }

  /// Sends a JSON configuration: `raw` (`stream`), `imu` (`accelerometer`,
  /// `gyroscope`, `magnetometer`, `temperature`: booleans, or "enable"/"disable"),
  /// `epoch` (`startDateTime`, `stopDateTime` as `MM-dd-yyyy HH:mm:ss`).
  /// Code 0 without a device, 3 with the unrecognized keys in `extra`, 8 for a
  /// date not in the format, 11 when the device refuses it, 4 when the
  /// device's SDK access is switched off.
  public func configureDevice(_ json: String) async {
    guard connection != nil else {
      fail(.noDeviceConnected)
      return
    }
    let request: AGConfigurationRequest
    switch AGConfigurationRequest.parse(json) {
    case .success(let parsed): request = parsed
    case .failure(let error):
      emit(.error(error))
      return
    }
    if let stream = request.rawStream {
      pending.append(.raw(stream))
      await send(.setRawStream, [stream ? 1 : 0])
    }
    if let flags = request.imuFlags {
      pending.append(.imu)
      await send(.setIMU, [flags])
    }
    if let epoch = request.epoch {
      pending.append(.epoch(start: epoch.startText, stop: epoch.stopText))
      var range = ByteWriter()
      range.append(UInt32(clamping: epoch.start))
      range.append(UInt32(clamping: epoch.stop))
      await send(.downloadEpochs, range.bytes)
    }
  }

  private func send(_ kind: AGWire.Kind, _ payload: [UInt8] = []) async {
    guard let connection else { return }
    let bytes = AGWire.frame(kind, payload)
    let size = max(20, await connection.mtu - 3)
    do {
      for offset in stride(from: 0, to: bytes.count, by: size) {
        try await connection.write(
          Array(bytes[offset..<min(offset + size, bytes.count)]), to: AGWire.command, type: .withResponse)
      }
    } catch {
      if !pending.isEmpty { pending.removeLast() }
      fail(.configurationFailed, "\(error)")
    }
  }

  // MARK: From the device

  private func receive(_ chunk: [UInt8]) {
    for message in assembler.add(chunk) {
      guard let kind = AGWire.Kind(rawValue: message.kind) else { continue }
      handle(kind, message.payload)
    }
  }

  private func handle(_ kind: AGWire.Kind, _ payload: [UInt8]) {
    guard let serial = connectedSerial else { return }
    switch kind {
    case .acknowledge where payload.count >= 2:
      // The oldest request of the acknowledged command's type (a lost answer cannot shift the rest).
      guard let index = pending.firstIndex(where: { $0.command.rawValue == payload[0] }) else { return }
      let request = pending.remove(at: index)
      let result = AGWire.Result(rawValue: payload[1]) ?? .invalidConfiguration
      switch (result, request) {
      case (.ok, .raw(let stream)): emit(.rawConfigured(stream: stream))
      case (.ok, .epoch(let start, let stop)): download = Download(start: start, stop: stop)
      case (.ok, _): break
      case (.dateError, _): fail(.dateFormatError, "the start is after the stop")
      case (.noData, _): fail(.epochDownloadError, "no epochs logged in that range")
      case (.busy, _): fail(.configurationFailed, "the device is busy")
      case (.accessDisabled, _): fail(.sdkAccessDisabled, "the device's SDK access is switched off")
      default: fail(.configurationFailed, "the device refused the configuration")
      }
    case .status:
      var reader = ByteReader(payload)
      guard let battery = reader.uint8(), let deviceTime = reader.uint32(), let start = reader.uint32(),
        let count = reader.uint32(), let rate = reader.uint8(), let streaming = reader.uint8(), reader.remaining >= 1
      else { return }
      if let index = pending.firstIndex(where: { if case .status = $0 { true } else { false } }) {
        pending.remove(at: index)
      }
      rawRate = Int(rate)
      emit(
        .status(
          AGDeviceStatus(
            device: serial, battery: Int(battery), deviceTime: Int64(deviceTime),
            epochStart: Int64(start), epochStop: Int64(start) + Int64(max(0, Int(count) - 1) * 60),
            epochCount: Int(count), rawSampleRate: Int(rate), rawStreaming: streaming == 1)))
    case .downloadHeader:
      var reader = ByteReader(payload)
      guard download != nil, let total = reader.uint32(), let firstTimestamp = reader.uint32() else { return }
      download?.total = Int(total)
      download?.firstTimestamp = Int64(firstTimestamp)
      emit(.epochDownload(state: .started, progress: 0))
    case .epochBatch:
      var reader = ByteReader(payload)
      guard var current = download, let first = reader.uint32(), let count = reader.uint8(),
        reader.remaining >= Int(count) * AGWire.epochRecordLength
      else { return }
      for n in 0..<Int(count) {
        guard let x = reader.uint16(), let y = reader.uint16(), let z = reader.uint16(), let steps = reader.uint8(),
          let heartRate = reader.uint8(), let wear = reader.uint8()
        else { return }
        current.records.append(
          AGEpoch(
            timestamp: current.firstTimestamp + Int64((Int(first) + n) * 60), xCounts: Int(x), yCounts: Int(y),
            zCounts: Int(z), steps: Int(steps), heartRate: Int(heartRate), wearDetect: Int(wear)))
      }
      let progress = current.total == 0 ? 0 : current.records.count * 100 / current.total
      if progress > current.lastProgress, progress < 100 {
        current.lastProgress = progress
        emit(.epochDownload(state: .downloading, progress: progress))
      }
      download = current
    case .downloadEnd where payload.count >= 1:
      guard let current = download else { return }
      download = nil
      if payload[0] == AGWire.Result.ok.rawValue, current.records.count == current.total {
        emit(.epochDownload(state: .completed, progress: 100))
        emit(.epochs(start: current.start, stop: current.stop, records: current.records))
      } else {
        fail(.wirelessTransferError, "at \(current.lastProgress)%")
      }
    case .rawBatch:
      var reader = ByteReader(payload)
      guard let timestamp = reader.uint32(), let milliseconds = reader.uint16(), let rate = reader.uint8(),
        let count = reader.uint8(), reader.remaining >= Int(count) * 6
      else { return }
      var samples: [AGAcceleration] = []
      samples.reserveCapacity(Int(count))
      for _ in 0..<Int(count) {
        guard let x = reader.int16(), let y = reader.int16(), let z = reader.int16() else { return }
        samples.append(
          AGAcceleration(
            x: Double(x) / AGWire.rawCountsPerG, y: Double(y) / AGWire.rawCountsPerG,
            z: Double(z) / AGWire.rawCountsPerG))
      }
      let time = Double(timestamp) + Double(milliseconds) / 1000
      emit(.raw(device: serial, timestamp: Int64(timestamp), acceleration: samples, time: time, rate: Int(rate)))
    default:
      break
    }
  }
}
