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
  static let peripheralAddress = BluetoothdCentralStandIn.peripheralAddress
  static let service = BluetoothdCentralStandIn.service
  static let characteristic = BluetoothdCentralStandIn.characteristic

  let privateBus: PrivateBus
  init() async throws { privateBus = try await PrivateBus() }

  /// Connects from a bus of the central's own, subscribes, and checks one
  /// notification arrives through the socket.
  func subscribe(_ fake: BluetoothdCentralStandIn) async throws -> (
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
    // Counted as it arrived: what a run's end compares with what was sent.
    #expect(central.received.value == 1)
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
    let fake = try await BluetoothdCentralStandIn.start(on: privateBus)
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
    let fake = try await BluetoothdCentralStandIn.start(on: privateBus)
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
    let fake = try await BluetoothdCentralStandIn.start(on: privateBus)
    defer { fake.close() }
    let (connection, notifications, _) = try await subscribe(fake)
    fake.ends.close(fake.ends.bluetoothd)
    let error = await ending(of: notifications)
    #expect(error?.code == .failed)
    #expect(error?.description.contains("BlueZ ended the notifications") == true)
    #expect(await connection.disconnectReason == nil)
  }

  /// A client is most often disconnected because its task was cancelled
  /// (Ctrl-C, `doppel watch --duration`, the end of a run): the link is still
  /// taken down, not left up for the next program to find the device gone.
  @Test func aCancelledClientStillDisconnects() async throws {
    let fake = try await BluetoothdCentralStandIn.start(on: privateBus)
    defer { fake.close() }
    let (connection, _, _) = try await subscribe(fake)
    let client = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      await connection.disconnect()
    }
    await client.value
    #expect(fake.calls.count("Disconnect") == 1)
    #expect(await connection.disconnectReason == .local)
  }
}
