import BlueZ
import DBus
import DBusTestSupport
import GATT
import Glibc
import Synchronization
import Testing

/// The central's side of an acquired notification socket when bluetoothd
/// closes it: the socket's end often comes before the signal that says why,
/// so the connection asks bluetoothd. A link that is down, or a bluetoothd
/// that no longer knows the device (killed and started again), ends the
/// connection as a disconnect; only a link still up makes it an error of the
/// subscription.
@Suite(.timeLimit(.minutes(1)))
struct CentralNotificationEndTests {
  static let peripheralAddress = "00:AA:01:00:00:02"
  static let service = "d0e20031-0000-4000-8000-00000000c0de"
  static let characteristic = "d0e20032-0000-4000-8000-00000000c0de"

  /// A stand-in for bluetoothd's central side on a private bus: adapter
  /// `hci0`, one connected peripheral with one notifying characteristic
  /// whose `AcquireNotify` hands out one end of a socket pair.
  struct FakeCentralSide {
    let bus: DBusConnection
    let adapter: BluetoothAdapter
    let devicePath: ObjectPath
    let ends: SocketEnds

    /// bluetoothd's end of the socket and the one it hands out, each closed
    /// once: a second close could hit a descriptor another test opened since.
    final class SocketEnds: Sendable {
      let bluetoothd: Int32
      let central: Int32
      private let open = Mutex<Set<Int32>>([])

      init(bluetoothd: Int32, central: Int32) {
        self.bluetoothd = bluetoothd
        self.central = central
        open.withLock { $0 = [bluetoothd, central] }
      }

      func close(_ fd: Int32) {
        if open.withLock({ $0.remove(fd) }) != nil { Glibc.close(fd) }
      }
    }

    static func start(on privateBus: PrivateBus) async throws -> FakeCentralSide {
      let bus = try await privateBus.connect()
      try await bus.requestName(BlueZ.service)
      await bus.exportObjectManager(at: .root)
      var pair: [Int32] = [-1, -1]
      guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else {
        throw DBusError(name: DBusError.Name.failed, message: "socketpair failed: errno \(errno)")
      }
      let central = pair[1]
      let adapterPath = try ObjectPath("/org/bluez/hci0")
      try await bus.export(
        adapterPath,
        interfaces: [
          DBusInterface(
            name: BlueZ.adapterInterface,
            properties: [
              DBusProperty(name: "Address", value: .string("00:AA:01:01:00:01")),
              DBusProperty(name: "Powered", value: .boolean(true)),
            ])
        ])
      let adapter = try await BluetoothAdapter.find("hci0", on: bus)
      let devicePath = try adapter.devicePath(for: peripheralAddress)
      let servicePath = try devicePath.appending("service0001")
      try await bus.export(
        devicePath,
        interfaces: [
          DBusInterface(
            name: BlueZ.deviceInterface,
            methods: [try DBusMethod(name: "Connect") { _ in [] }],
            properties: [
              DBusProperty(name: "Address", value: .string(peripheralAddress)),
              DBusProperty(name: "Connected", value: .boolean(true)),
              DBusProperty(name: "ServicesResolved", value: .boolean(true)),
            ])
        ])
      try await bus.export(
        servicePath,
        interfaces: [
          DBusInterface(
            name: BlueZ.gattServiceInterface,
            properties: [
              DBusProperty(name: "UUID", value: .string(service)),
              DBusProperty(name: "Primary", value: .boolean(true)),
            ])
        ])
      try await bus.export(
        servicePath.appending("char0002"),
        interfaces: [
          DBusInterface(
            name: BlueZ.gattCharacteristicInterface,
            methods: [
              try DBusMethod(name: "AcquireNotify", input: "a{sv}", output: "hq") { _ in
                [.unixFD(central), .uint16(247)]
              }
            ],
            properties: [
              DBusProperty(name: "UUID", value: .string(characteristic)),
              DBusProperty(name: "Service", value: .objectPath(servicePath)),
              DBusProperty(name: "Flags", value: .strings(["notify"])),
            ])
        ])
      return FakeCentralSide(
        bus: bus, adapter: adapter, devicePath: devicePath, ends: SocketEnds(bluetoothd: pair[0], central: central))
    }

    func close() {
      ends.close(ends.bluetoothd)
      ends.close(ends.central)
    }
  }

  let privateBus: PrivateBus
  init() async throws { privateBus = try await PrivateBus() }

  /// Connects from a bus of the central's own, subscribes, and checks one
  /// notification arrives through the socket.
  func subscribe(_ fake: FakeCentralSide) async throws -> (
    any CentralConnection, NotificationStream, AsyncStream<ConnectionEvent>
  ) {
    let bus = try await privateBus.connect()
    let central = BlueZCentral(adapter: fake.adapter, bus: bus)
    let connection = try await central.connect(PeripheralID(Self.peripheralAddress), timeout: .seconds(10))
    let events = connection.events()
    let address = try CharacteristicAddress(
      service: BluetoothUUID(string: Self.service), characteristic: BluetoothUUID(string: Self.characteristic))
    let notifications = try await connection.notifications(of: address)
    let packet: [UInt8] = [7, 1, 2]
    #expect(packet.withUnsafeBytes { write(fake.ends.bluetoothd, $0.baseAddress, $0.count) } == 3)
    var iterator = notifications.makeAsyncIterator()
    #expect(try await iterator.next() == packet)
    return (connection, notifications, events)
  }

  /// How the notification stream ended: `nil` when it finished without an error.
  func ending(of notifications: NotificationStream) async -> GATTError? {
    do {
      for try await _ in notifications {}
      return nil
    } catch let error as GATTError {
      return error
    } catch {
      return GATTError(.failed, "\(error)")
    }
  }

  func lastEvent(_ events: AsyncStream<ConnectionEvent>) async -> ConnectionEvent? {
    var last: ConnectionEvent?
    for await event in events { last = event }
    return last
  }

  @Test func aBluetoothdThatNoLongerKnowsTheDeviceMeansTheLinkWasLost() async throws {
    let fake = try await FakeCentralSide.start(on: privateBus)
    defer { fake.close() }
    let (connection, notifications, events) = try await subscribe(fake)
    // As after bluetoothd was killed and started again: the device's object
    // is gone, and the old daemon's socket closes.
    try await fake.bus.unexport(fake.devicePath)
    fake.ends.close(fake.ends.bluetoothd)
    let error = await ending(of: notifications)
    #expect(error?.code == .disconnected(.linkLoss))
    #expect(await lastEvent(events) == .disconnected(.linkLoss))
    #expect(await connection.disconnectReason == .linkLoss)
  }

  @Test func aLinkThatIsDownEndsTheConnection() async throws {
    let fake = try await FakeCentralSide.start(on: privateBus)
    defer { fake.close() }
    let (connection, notifications, events) = try await subscribe(fake)
    // The property changes without a signal the central has read yet.
    try await fake.bus.updateProperties(
      at: fake.devicePath, interface: BlueZ.deviceInterface, ["Connected": .boolean(false)])
    fake.ends.close(fake.ends.bluetoothd)
    let error = await ending(of: notifications)
    #expect(error?.code == .disconnected(.remote))
    #expect(await lastEvent(events) == .disconnected(.remote))
    #expect(await connection.disconnectReason == .remote)
  }

  @Test func aLinkStillUpMakesItAnErrorOfTheSubscriptionOnly() async throws {
    let fake = try await FakeCentralSide.start(on: privateBus)
    defer { fake.close() }
    let (connection, notifications, _) = try await subscribe(fake)
    fake.ends.close(fake.ends.bluetoothd)
    let error = await ending(of: notifications)
    #expect(error?.code == .failed)
    #expect(error?.description.contains("BlueZ ended the notifications") == true)
    #expect(await connection.disconnectReason == nil)
  }
}
