import BlueZ
import DBus
import DBusTestSupport
import GATT
import Glibc
import Testing

/// `notificationsTaken()`: over BlueZ each characteristic has a socket of
/// its own, so a model that needs one notification not to overtake another
/// (the Muse's AF7, sent last of a set) waits until bluetoothd has read what
/// was sent before.
@Suite struct PeripheralNotificationOrderTests {
  actor TwoStreams: PeripheralModel {
    static let service: BluetoothUUID = "d0e20041-0000-4000-8000-00000000c0de"
    static let first = CharacteristicAddress(service: service, characteristic: "d0e20042-0000-4000-8000-00000000c0de")
    static let second = CharacteristicAddress(service: service, characteristic: "d0e20043-0000-4000-8000-00000000c0de")
    nonisolated let profile: GATTProfile
    nonisolated let advertisement = AdvertisementData(localName: "Ordered")

    init() throws {
      profile = try GATTProfile([
        ServiceDefinition(
          Self.service, name: "Ordered",
          characteristics: [
            CharacteristicDefinition(Self.first.characteristic, name: "First", properties: [.notify]),
            CharacteristicDefinition(Self.second.characteristic, name: "Second", properties: [.notify]),
          ])
      ])
    }
  }

  let privateBus: PrivateBus
  init() async throws { privateBus = try await PrivateBus() }

  /// Whether `fd` has a packet to read within `milliseconds`.
  static func readable(_ fd: Int32, within milliseconds: Int32) -> Bool {
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, milliseconds) == 1
  }

  static func read(_ fd: Int32) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: 64)
    let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 64) }
    return Array(buffer.prefix(max(count, 0)))
  }

  func host(name: String) async throws -> (BlueZPeripheral, first: Int32, second: Int32) {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(try TwoStreams(), on: bluez.adapter, bus: bus, name: name)
    let root = "/org/doppel/hci0/\(name)/service0000"
    let first = try await bluez.acquireNotify(try ObjectPath(root + "/char0000"), of: bus.uniqueName, mtu: 64).fd
    let second = try await bluez.acquireNotify(try ObjectPath(root + "/char0001"), of: bus.uniqueName, mtu: 64).fd
    let deadline = ContinuousClock.now + .seconds(5)
    while await peripheral.acquiredNotificationSockets < 2, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    return (peripheral, first, second)
  }

  @Test func itReturnsOnceWhatWasSentIsRead() async throws {
    let (peripheral, first, second) = try await host(name: "ordered")
    let sender = Task {
      try await peripheral.notify([1], characteristic: TwoStreams.first)
      await peripheral.notificationsTaken()
      try await peripheral.notify([2], characteristic: TwoStreams.second)
    }
    #expect(Self.readable(first, within: 2000))
    // The second waits while the first lies unread…
    #expect(!Self.readable(second, within: 30))
    #expect(Self.read(first) == [1])
    // …and goes once it was read.
    #expect(Self.readable(second, within: 2000))
    #expect(Self.read(second) == [2])
    try await sender.value
    close(first)
    close(second)
    await peripheral.stop()
  }

  @Test func withoutItEachCharacteristicGoesAtOnce() async throws {
    let (peripheral, first, second) = try await host(name: "free")
    try await peripheral.notify([1], characteristic: TwoStreams.first)
    try await peripheral.notify([2], characteristic: TwoStreams.second)
    #expect(Self.readable(second, within: 2000))
    #expect(Self.read(second) == [2])
    #expect(Self.read(first) == [1])
    close(first)
    close(second)
    await peripheral.stop()
  }

  /// A reader that never reads holds the device up for the bound, no longer.
  @Test func anUnreadSocketHoldsItUpForTheBound() async throws {
    let (peripheral, first, second) = try await host(name: "stalled")
    #expect(await peripheral.notificationOrderBound == .seconds(10))
    await peripheral.setNotificationOrderBound(.milliseconds(500))
    try await peripheral.notify([1], characteristic: TwoStreams.first)
    let start = ContinuousClock.now
    await peripheral.notificationsTaken()
    let waited = ContinuousClock.now - start
    #expect(waited >= .milliseconds(500))
    #expect(waited < .seconds(5))
    #expect(Self.read(first) == [1])
    // With nothing unread it returns at once, well within the bound.
    let again = ContinuousClock.now
    await peripheral.notificationsTaken()
    #expect(ContinuousClock.now - again < .milliseconds(400))
    close(first)
    close(second)
    await peripheral.stop()
  }

  /// Once a wait has run out, the next ones wait ½ s at most until one finds
  /// everything read: a bluetoothd that neither reads nor closes a socket
  /// does not hold every notification up for the whole bound.
  @Test func behindItWaitsHalfASecondUntilCaughtUp() async throws {
    let (peripheral, first, second) = try await host(name: "behind")
    await peripheral.setNotificationOrderBound(.seconds(2))
    try await peripheral.notify([1], characteristic: TwoStreams.first)
    var start = ContinuousClock.now
    await peripheral.notificationsTaken()
    #expect(ContinuousClock.now - start >= .seconds(2))
    try await peripheral.notify([2], characteristic: TwoStreams.second)
    start = ContinuousClock.now
    await peripheral.notificationsTaken()
    let behind = ContinuousClock.now - start
    #expect(behind >= .milliseconds(500))
    #expect(behind < .milliseconds(1500))
    // Caught up: the next stall gets the whole bound again.
    #expect(Self.read(first) == [1])
    #expect(Self.read(second) == [2])
    await peripheral.notificationsTaken()
    try await peripheral.notify([3], characteristic: TwoStreams.first)
    start = ContinuousClock.now
    await peripheral.notificationsTaken()
    #expect(ContinuousClock.now - start >= .seconds(2))
    close(first)
    close(second)
    await peripheral.stop()
  }

  /// A run's end waits until bluetoothd has read what was sent, and no
  /// longer: not while the sockets hold notifications, at once after.
  @Test func allNotificationsTakenWaitsForTheReaderUntilTheDeadline() async throws {
    let (peripheral, first, second) = try await host(name: "taken")
    try await peripheral.notify([1], characteristic: TwoStreams.first)
    let start = ContinuousClock.now
    #expect(!(await peripheral.allNotificationsTaken(by: start + .milliseconds(300))))
    #expect(ContinuousClock.now - start >= .milliseconds(300))
    #expect(Self.read(first) == [1])
    let again = ContinuousClock.now
    #expect(await peripheral.allNotificationsTaken(by: again + .seconds(5)))
    #expect(ContinuousClock.now - again < .seconds(1))
    close(first)
    close(second)
    await peripheral.stop()
  }

  /// The count a run's end compares with what its clients received: one a
  /// notification handed to bluetoothd, none for one refused.
  @Test func notificationsSentCountsWhatReachedASocket() async throws {
    let (peripheral, first, second) = try await host(name: "counted")
    #expect(await peripheral.notificationsSent == 0)
    try await peripheral.notify([1], characteristic: TwoStreams.first)
    try await peripheral.notify([2], characteristic: TwoStreams.second)
    try await peripheral.notify([3], characteristic: TwoStreams.first)
    #expect(await peripheral.notificationsSent == 3)
    // Longer than the MTU allows: refused, not counted.
    await #expect(throws: GATTError.self) {
      try await peripheral.notify([UInt8](repeating: 0, count: 100), characteristic: TwoStreams.first)
    }
    #expect(await peripheral.notificationsSent == 3)
    close(first)
    close(second)
    await peripheral.stop()
  }
}
