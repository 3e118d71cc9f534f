import GATT
import Loopback

/// A small device model for the loopback tests: a counter notified every
/// 10 ms while subscribed, a control characteristic whose writes trigger
/// behaviour, a long readable value, and a characteristic for oversized
/// notifications and indications. It logs every callback.
actor CounterPeripheral: PeripheralModel {
  static let service: BluetoothUUID = "d0e10001-0000-4000-8000-00000000c0de"
  static let counter = CharacteristicAddress(
    service: service, characteristic: "d0e10002-0000-4000-8000-00000000c0de")
  static let control = CharacteristicAddress(
    service: service, characteristic: "d0e10003-0000-4000-8000-00000000c0de")
  static let long = CharacteristicAddress(
    service: service, characteristic: "d0e10004-0000-4000-8000-00000000c0de")
  static let bulk = CharacteristicAddress(
    service: service, characteristic: "d0e10005-0000-4000-8000-00000000c0de")
  static let deviceInformation = BluetoothUUID(0x180A)
  static let hardwareRevision = CharacteristicAddress(
    service: deviceInformation, characteristic: BluetoothUUID(0x2A27))

  /// A control write of this refuses with an application error.
  static let refuseCommand: [UInt8] = [0xEE]
  static let refusal = ATTError.application(0x81)
  /// A control write of this makes the peripheral disconnect the writer.
  static let hangUpCommand: [UInt8] = [0xD1]
  /// A control write of `[sendBulkCommand, n]` notifies n bytes on `bulk`;
  /// `[sendBulkCommand, n, 1]` indicates them.
  static let sendBulkCommand: UInt8 = 0xB0
  static let longValue: [UInt8] = (0..<50).map { UInt8($0) }

  nonisolated let profile: GATTProfile
  nonisolated let advertisement: AdvertisementData

  private(set) var log: [String] = []
  private(set) var sentCount = 0
  private(set) var readOffsets: [Int] = []
  private(set) var bulkResults: [String] = []
  private var host: (any PeripheralHost)?
  private var streaming: Task<Void, Never>?
  private var control: [UInt8] = [0x00]

  /// Whether it advertises once started (`false`: it switches its advertising off in `start(host:)`).
  private let advertisesAtStart: Bool

  init(name: String = "Counter", advertisesAtStart: Bool = true) throws {
    self.advertisesAtStart = advertisesAtStart
    profile = try GATTProfile([
      ServiceDefinition(
        Self.service, name: "Counter",
        characteristics: [
          CharacteristicDefinition(
            Self.counter.characteristic, name: "Count", properties: [.notify]),
          CharacteristicDefinition(
            Self.control.characteristic, name: "Control",
            properties: [.read, .write, .writeWithoutResponse],
            maximumLength: 8, descriptors: [.userDescription("Control")]),
          CharacteristicDefinition(Self.long.characteristic, name: "Long", properties: [.read]),
          CharacteristicDefinition(
            Self.bulk.characteristic, name: "Bulk", properties: [.notify, .indicate]),
        ]),
      ServiceDefinition(
        Self.deviceInformation, name: "Device Information",
        characteristics: [
          CharacteristicDefinition(
            Self.hardwareRevision.characteristic, name: "Hardware Revision", properties: [.read],
            initialValue: Array("rev C".utf8))
        ]),
    ])
    advertisement = AdvertisementData(localName: name, serviceUUIDs: [Self.service])
  }

  func start(host: any PeripheralHost) async {
    self.host = host
    log.append("start")
    if !advertisesAtStart { await host.setAdvertisingEnabled(false) }
  }

  func stop() async {
    streaming?.cancel()
    log.append("stop")
  }

  /// Switches advertising as firmware does, through the host it was given
  /// (kept after `stop()`, as a model's stray task may keep it).
  func setAdvertising(_ enabled: Bool) async {
    await host?.setAdvertisingEnabled(enabled)
  }

  func centralConnected(_ central: CentralID) async {
    log.append("connected \(central)")
  }

  func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async {
    log.append("disconnected \(central) \(reason)")
  }

  func mtuChanged(_ mtu: Int, central: CentralID) async {
    log.append("mtu \(mtu)")
  }

  func subscriptionChanged(
    characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool
  ) async {
    log.append("\(subscribed ? "subscribed" : "unsubscribed") \(characteristic.characteristic)")
    guard characteristic == Self.counter, let host else { return }
    streaming?.cancel()
    streaming = subscribed ? Self.stream(on: host.clock, host: host, model: self) : nil
  }

  func read(characteristic: CharacteristicAddress, offset: Int, central: CentralID)
    async throws(ATTError)
    -> [UInt8]
  {
    switch characteristic {
    case Self.control:
      return Array(control.dropFirst(offset))
    case Self.long:
      readOffsets.append(offset)
      guard offset <= Self.longValue.count else { throw .invalidOffset }
      return Array(Self.longValue[offset...])
    default:
      return try await defaultRead(characteristic: characteristic, offset: offset, central: central)
    }
  }

  func write(
    characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID
  )
    async throws(ATTError)
  {
    log.append("write \(type) \(value)")
    guard characteristic == Self.control else { throw .writeNotPermitted }
    if value == Self.refuseCommand { throw Self.refusal }
    if value == Self.hangUpCommand {
      await host?.disconnect(central)
      return
    }
    if value.count >= 2, value[0] == Self.sendBulkCommand, let host {
      let payload = [UInt8](repeating: 0xAB, count: Int(value[1]))
      do throws(GATTError) {
        if value.count > 2 {
          try await host.indicate(payload, characteristic: Self.bulk)
        } else {
          try await host.notify(payload, characteristic: Self.bulk)
        }
        bulkResults.append("sent \(payload.count)")
      } catch {
        bulkResults.append("\(error.code)")
      }
      return
    }
    control = value
  }

  /// What the host reports about centrals and subscriptions, as the model sees it.
  func hostView() async -> (connected: [CentralID], bulkSubscribers: [CentralID], mtus: [Int?]) {
    guard let host else { return ([], [], []) }
    let connected = await host.connectedCentrals
    var mtus: [Int?] = []
    for central in connected {
      mtus.append(await host.mtu(for: central))
    }
    return (connected, await host.subscribers(of: Self.bulk), mtus)
  }

  private func defaultRead(characteristic: CharacteristicAddress, offset: Int, central: CentralID)
    async throws(ATTError) -> [UInt8]
  {
    guard let value = profile.characteristic(at: characteristic)?.initialValue else {
      throw .readNotPermitted
    }
    return Array(value.dropFirst(offset))
  }

  private func didSend() {
    sentCount += 1
  }

  /// Notifies 0, 1, 2, … as UInt32 little-endian, one every 10 ms from now,
  /// on deadlines computed from the start so that they do not drift.
  private static func stream<C: Clock<Duration>>(
    on clock: C, host: any PeripheralHost, model: CounterPeripheral
  )
    -> Task<Void, Never>
  {
    let start = clock.now
    return Task {
      var deadline = start
      var count: UInt32 = 0
      while true {
        deadline = deadline.advanced(by: .milliseconds(10))
        do {
          try await clock.sleep(until: deadline, tolerance: nil)
        } catch {
          return
        }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: count >> ($0 * 8)) }
        do {
          try await host.notify(bytes, characteristic: counter)
          count += 1
          await model.didSend()
        } catch {
          continue
        }
      }
    }
  }
}

/// Another peripheral with a different service and name, for scan filters.
struct BeaconPeripheral: PeripheralModel {
  static let service = BluetoothUUID(0xFEAA)
  let profile: GATTProfile
  let advertisement = AdvertisementData(
    localName: "Beacon", serviceUUIDs: [BeaconPeripheral.service])

  init() throws {
    profile = try GATTProfile([
      ServiceDefinition(
        Self.service,
        characteristics: [
          CharacteristicDefinition(
            BluetoothUUID(0x2A00), name: "Name", properties: [.read], initialValue: [0x42])
        ])
    ])
  }
}
