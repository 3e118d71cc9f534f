import GATT
import Generic
import Synchronization
import Testing

/// A replay keeps the recording's order across characteristics: before a
/// value on another characteristic than the one before, it asks its host to
/// have the earlier one taken (`PeripheralHost.notificationsTaken()`, which
/// over BlueZ waits for bluetoothd to read the earlier socket; ties in a
/// capture otherwise reached the central swapped). Values on one
/// characteristic need no wait: one socket keeps its order.
@Suite(.timeLimit(.minutes(1)))
struct GenericReplayOrderTests {
  static let service: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
  static let first = CharacteristicAddress(service: service, characteristic: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
  static let second = CharacteristicAddress(service: service, characteristic: "6E400004-B5A3-F393-E0A9-E50E24DCCA9E")
  static let profile = try! GATTProfile([
    ServiceDefinition(
      service, name: "Sensor",
      characteristics: [
        CharacteristicDefinition(first.characteristic, name: "First", properties: [.notify]),
        CharacteristicDefinition(second.characteristic, name: "Second", properties: [.notify]),
      ])
  ])

  /// A host that writes down what the model asks of it, in order.
  final class RecordingHost: PeripheralHost {
    let log = Mutex<[String]>([])
    let clock: any Clock<Duration> = ContinuousClock()

    func notify(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError) {
      let name = characteristic == GenericReplayOrderTests.first ? "first" : "second"
      log.withLock { $0.append("\(name) \(value[0])") }
    }
    func indicate(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError) {}
    func subscribers(of characteristic: CharacteristicAddress) async -> [CentralID] { ["00:AA:01:00:00:01"] }
    var connectedCentrals: [CentralID] { get async { ["00:AA:01:00:00:01"] } }
    func mtu(for central: CentralID) async -> Int? { 247 }
    func disconnect(_ central: CentralID) async {}
    func setAdvertisingEnabled(_ enabled: Bool) async {}
    func notificationsTaken() async { log.withLock { $0.append("taken") } }
  }

  @Test func itWaitsForTheValueBeforeOnlyWhenTheCharacteristicChanges() async throws {
    // Two ties across characteristics (as a capture's timestamps give), and
    // two values in a row on one characteristic.
    let entries: [NotificationReplay.Entry] = [
      .init(time: .milliseconds(1), characteristic: Self.first, value: [1]),
      .init(time: .milliseconds(1), characteristic: Self.second, value: [2]),
      .init(time: .milliseconds(2), characteristic: Self.second, value: [3]),
      .init(time: .milliseconds(3), characteristic: Self.first, value: [4]),
      .init(time: .milliseconds(3), characteristic: Self.first, value: [5]),
    ]
    let device = GenericPeripheral(
      profile: Self.profile, advertisement: AdvertisementData(localName: "Sensor"),
      replays: [NotificationReplay(entries: entries, anchor: .hosting, loops: false)])
    let host = RecordingHost()
    await device.start(host: host)
    let deadline = ContinuousClock.now + .seconds(10)
    while await device.sent < entries.count, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    await device.stop()
    #expect(
      host.log.withLock { $0 } == ["first 1", "taken", "second 2", "second 3", "taken", "first 4", "first 5"])
  }
}
