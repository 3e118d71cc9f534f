import GATT
import Generic
import Loopback
import Testing

/// The generic device over the in-process loopback, in virtual time: its
/// declared database, its replays at their recorded times, and its answers to writes.
@Suite(.timeLimit(.minutes(1)))
struct GenericPeripheralLoopbackTests {
  let clock = VirtualClock()
  let air: LoopbackAir

  static let service: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
  static let data = CharacteristicAddress(service: service, characteristic: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
  static let control = CharacteristicAddress(
    service: service, characteristic: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
  static let status = CharacteristicAddress(service: service, characteristic: "6E400004-B5A3-F393-E0A9-E50E24DCCA9E")
  static let profile = try! GATTProfile([
    ServiceDefinition(
      service, name: "Sensor",
      characteristics: [
        CharacteristicDefinition(data.characteristic, name: "Data", properties: [.notify]),
        CharacteristicDefinition(control.characteristic, name: "Control", properties: [.write]),
        CharacteristicDefinition(
          status.characteristic, name: "Status", properties: [.read, .indicate], initialValue: [0x01, 0x02],
          descriptors: [.userDescription("status")]),
      ])
  ])
  static let advertisement = AdvertisementData(
    localName: "Sensor-7", serviceUUIDs: [service], manufacturerData: [0x0059: [1, 2, 3]])

  init() { air = LoopbackAir(clock: clock) }

  private func connect() async throws -> any CentralConnection {
    let link = try air.makeCentral()
    let found = try await link.firstPeripheral(
      matching: ScanFilter(namePrefix: "Sensor"), within: .seconds(5), clock: clock)
    #expect(found.advertisement.manufacturerData[0x0059] == [1, 2, 3])
    #expect(found.advertisement.serviceUUIDs == [Self.service])
    return try await link.connect(found.id, timeout: .seconds(5))
  }

  /// Collects `count` values of `stream`, with the virtual time each arrived.
  private func collect(_ count: Int, from stream: NotificationStream) -> Task<[(Duration, [UInt8])], any Error> {
    let clock = self.clock
    let start = clock.now
    return Task {
      var values: [(Duration, [UInt8])] = []
      for try await value in stream {
        values.append((start.duration(to: clock.now), value))
        if values.count == count { break }
      }
      return values
    }
  }

  @Test func servesTheDeclaredDatabaseAndStaticValues() async throws {
    try await air.host(GenericPeripheral(profile: Self.profile, advertisement: Self.advertisement))
    let connection = try await connect()
    let services = try await connection.discoverServices()
    #expect(services.map(\.uuid) == [Self.service])
    #expect(services[0].characteristics.map(\.address) == [Self.data, Self.control, Self.status])
    #expect(services[0].characteristics[2].properties == [.read, .indicate])
    #expect(try await connection.read(Self.status) == [0x01, 0x02])
    await #expect(throws: GATTError.self) { try await connection.read(Self.data) }
  }

  @Test func replaysAtTheRecordedTimesFromTheSubscription() async throws {
    let entries: [NotificationReplay.Entry] = [
      .init(time: .milliseconds(100), characteristic: Self.data, value: [0xA0]),
      .init(time: .milliseconds(150), characteristic: Self.data, value: [0xA1, 0x01]),
      .init(time: .milliseconds(400), characteristic: Self.data, value: [0xA2]),
    ]
    let device = GenericPeripheral(
      profile: Self.profile, advertisement: Self.advertisement,
      replays: [NotificationReplay(entries: entries, anchor: .subscribed, loops: false)])
    try await air.host(device)
    let connection = try await connect()
    await clock.advance(by: .seconds(2))  // nothing is sent before the subscription
    let stream = try await connection.notifications(of: Self.data)
    let received = collect(3, from: stream)
    await clock.advance(by: .seconds(1))
    let values = try await received.value
    #expect(values.map(\.1) == [[0xA0], [0xA1, 0x01], [0xA2]])
    #expect(values.map(\.0) == [.milliseconds(100), .milliseconds(150), .milliseconds(400)])
    #expect(await device.sent == 3)
  }

  @Test func loopingReplayStartsOverInRhythm() async throws {
    let entries: [NotificationReplay.Entry] = [
      .init(time: .zero, characteristic: Self.data, value: [1]),
      .init(time: .milliseconds(10), characteristic: Self.data, value: [2]),
    ]
    let replay = NotificationReplay(entries: entries, anchor: .subscribed, loops: true)
    #expect(replay.period == .milliseconds(20))
    try await air.host(GenericPeripheral(profile: Self.profile, advertisement: Self.advertisement, replays: [replay]))
    let connection = try await connect()
    let stream = try await connection.notifications(of: Self.data)
    let received = collect(6, from: stream)
    await clock.advance(by: .seconds(1))
    let values = try await received.value
    #expect(values.map(\.1) == [[1], [2], [1], [2], [1], [2]])
    let gaps = zip(values, values.dropFirst()).map { $1.0 - $0.0 }
    #expect(gaps == Array(repeating: .milliseconds(10), count: 5))
  }

  @Test func valuesDueWhileNobodyIsSubscribedAreSkippedAndCounted() async throws {
    let entries: [NotificationReplay.Entry] = (0..<5).map {
      .init(time: .milliseconds(100 * $0), characteristic: Self.data, value: [UInt8($0)])
    }
    let device = GenericPeripheral(
      profile: Self.profile, advertisement: Self.advertisement,
      replays: [NotificationReplay(entries: entries, anchor: .connected, loops: false)])
    try await air.host(device)
    let connection = try await connect()
    await clock.advance(by: .milliseconds(250))
    let stream = try await connection.notifications(of: Self.data)
    let received = collect(2, from: stream)
    await clock.advance(by: .seconds(1))
    #expect(try await received.value.map(\.1) == [[3], [4]])
    #expect(await device.skipped == 3)
    #expect(await device.sent == 2)
  }

  @Test func writesMatchingARuleAreAnsweredOthersAccepted() async throws {
    let rules = [
      WriteRule(
        characteristic: Self.control, match: .bytes([0x01]),
        answer: .replies([
          .init(characteristic: Self.data, value: [0xAC, 0x01], delay: .milliseconds(5)),
          .init(characteristic: Self.status, value: [0x07], delay: .milliseconds(20)),
        ])),
      WriteRule(characteristic: Self.control, match: .pattern("ff.*"), answer: .error(.writeRequestRejected)),
    ]
    let device = GenericPeripheral(profile: Self.profile, advertisement: Self.advertisement, rules: rules)
    try await air.host(device)
    let connection = try await connect()
    let data = collect(1, from: try await connection.notifications(of: Self.data))
    let status = collect(1, from: try await connection.notifications(of: Self.status))
    try await connection.write([0x01], to: Self.control, type: .withResponse)
    await clock.advance(by: .milliseconds(100))
    #expect(try await data.value.map(\.1) == [[0xAC, 0x01]])
    #expect(try await status.value.map(\.1) == [[0x07]])
    do {
      try await connection.write([0xFF, 0x00], to: Self.control, type: .withResponse)
      Issue.record("a write matching the error rule was accepted")
    } catch {
      #expect(error.code == .attribute(.writeRequestRejected))
    }
    try await connection.write([0x02], to: Self.control, type: .withResponse)
    #expect(await device.writes.map(\.value) == [[0x01], [0xFF, 0x00], [0x02]])
  }

  @Test func patternsMatchTheWholeValueInHex() {
    let rule = WriteRule(characteristic: Self.control, match: .pattern("0[12]..$"), answer: .replies([]))
    #expect(rule.matches([0x01, 0xAB], on: Self.control))
    #expect(!rule.matches([0x03, 0xAB], on: Self.control))
    #expect(!rule.matches([0x01, 0xAB, 0x00], on: Self.control))
    #expect(!rule.matches([0x01, 0xAB], on: Self.data))
    #expect(WriteRule.hex([0x00, 0x0F, 0xF0]) == "000ff0")
  }
}
