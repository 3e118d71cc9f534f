import BlueZ
import DBus
import DBusTestSupport
import GATT
import Glibc
import Testing

/// `BlueZPeripheral` against a fake `org.bluez` on a real dbus-daemon:
/// `AcquireNotify` hands out one end of a socket pair over D-Bus, every
/// notification is then one packet on it, and its closing ends the
/// subscription; without sockets, notifications are `PropertiesChanged`.
@Suite struct PeripheralNotificationSocketTests {
  /// A model with one notifying and one indicating characteristic that logs subscriptions.
  actor SubscriptionLog: PeripheralModel {
    static let service: BluetoothUUID = "d0e20001-0000-4000-8000-00000000c0de"
    static let notifying = CharacteristicAddress(
      service: service, characteristic: "d0e20002-0000-4000-8000-00000000c0de")
    static let indicating = CharacteristicAddress(
      service: service, characteristic: "d0e20003-0000-4000-8000-00000000c0de")

    nonisolated let profile: GATTProfile
    nonisolated let advertisement = AdvertisementData(localName: "Socket")
    private(set) var subscriptions: [Bool] = []

    init() throws {
      profile = try GATTProfile([
        ServiceDefinition(
          Self.service, name: "Sockets",
          characteristics: [
            CharacteristicDefinition(Self.notifying.characteristic, name: "Stream", properties: [.notify]),
            CharacteristicDefinition(Self.indicating.characteristic, name: "Events", properties: [.indicate]),
          ])
      ])
    }

    func subscriptionChanged(characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool) async {
      if characteristic == Self.notifying { subscriptions.append(subscribed) }
    }

    /// Waits (bounded) until the subscriptions seen are `expected`.
    func waitFor(_ expected: [Bool]) async throws {
      let deadline = ContinuousClock.now + .seconds(5)
      while subscriptions != expected, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
      #expect(subscriptions == expected)
    }
  }

  let privateBus: PrivateBus
  init() async throws { privateBus = try await PrivateBus() }

  func characteristicPath(_ index: Int) throws -> ObjectPath {
    let digits = String(index)
    return try ObjectPath(
      "/org/doppel/hci0/test/service0000/char" + String(repeating: "0", count: 4 - digits.count) + digits)
  }

  @Test func notificationsAreOnePacketEachOnTheAcquiredSocket() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try SubscriptionLog()
    let peripheral = try await BlueZPeripheral.host(model, on: bluez.adapter, bus: bus, name: "test")
    let characteristics = (
      try DBusRemoteObject(connection: bluez.bus, destination: bus.uniqueName, path: try characteristicPath(0)),
      try DBusRemoteObject(connection: bluez.bus, destination: bus.uniqueName, path: try characteristicPath(1))
    )
    // BlueZ acquires only where the property exists: notifying characteristics.
    #expect(
      try await characteristics.0.property(BlueZ.gattCharacteristicInterface, "NotifyAcquired") == .boolean(false))
    await #expect(throws: DBusError.self) {
      try await characteristics.1.property(BlueZ.gattCharacteristicInterface, "NotifyAcquired")
    }

    let (fd, mtu) = try await bluez.acquireNotify(try characteristicPath(0), of: bus.uniqueName, mtu: 517)
    #expect(mtu == 517)
    try await model.waitFor([true])
    let central = CentralID(FakeBlueZ.centralAddress)
    #expect(await peripheral.subscribers(of: SubscriptionLog.notifying) == [central])
    #expect(await peripheral.mtu(for: central) == 517)
    #expect(await peripheral.acquiredNotificationSockets == 1)
    #expect(try await characteristics.0.property(BlueZ.gattCharacteristicInterface, "NotifyAcquired") == .boolean(true))

    // 300 notifications of 244 bytes, more than the socket holds unread.
    let values = (0..<300).map { n in [UInt8(n & 0xFF), UInt8(n >> 8)] + [UInt8](repeating: UInt8(n % 7), count: 242) }
    let sender = Task {
      for value in values { try await peripheral.notify(value, characteristic: SubscriptionLog.notifying) }
    }
    let packets = await NotificationSocketTests.readPackets(fd, count: values.count, size: 244)
    try await sender.value
    #expect(packets.count == values.count)
    #expect(packets.elementsEqual(values), "one packet per notification, in order")
    // Nothing went as a D-Bus signal: the Value property never changed.
    #expect(try await characteristics.0.property(BlueZ.gattCharacteristicInterface, "Value") == .bytes([]))

    // BlueZ closes its end when the central unsubscribes.
    close(fd)
    try await model.waitFor([true, false])
    #expect(await peripheral.subscribers(of: SubscriptionLog.notifying) == [])
    await #expect(throws: GATTError.self) {
      try await peripheral.notify([1], characteristic: SubscriptionLog.notifying)
    }
    #expect(
      try await characteristics.0.property(BlueZ.gattCharacteristicInterface, "NotifyAcquired") == .boolean(false))
    await peripheral.stop()
  }

  /// `notifyAtOnce` writes to the socket from the caller, without the
  /// actor, once a notification went out on it; in order with those
  /// awaited (the first, and any the socket had no room for); never on a
  /// socket that closed; and with the MTU's rule.
  @Test func notificationsGoAtOnceOnASocketAlreadyUsed() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try SubscriptionLog()
    let peripheral = try await BlueZPeripheral.host(model, on: bluez.adapter, bus: bus, name: "test")
    let stream = SubscriptionLog.notifying
    let (fd, _) = try await bluez.acquireNotify(try characteristicPath(0), of: bus.uniqueName, mtu: 100)
    try await model.waitFor([true])
    // Not before a notification went out on the socket.
    #expect(try peripheral.notifyAtOnce([0], characteristic: stream) == false)

    // 300 values of 97 bytes: each at once where it can go, else awaited.
    let values = (0..<300).map { n in [UInt8(n & 0xFF), UInt8(n >> 8)] + [UInt8](repeating: UInt8(n % 7), count: 95) }
    let sender = Task {
      var atOnce = 0
      for value in values {
        if try peripheral.notifyAtOnce(value, characteristic: stream) {
          atOnce += 1
        } else {
          try await peripheral.notify(value, characteristic: stream)
        }
      }
      return atOnce
    }
    let packets = await NotificationSocketTests.readPackets(fd, count: values.count, size: 97)
    let atOnce = try await sender.value
    #expect(packets.elementsEqual(values), "one packet per notification, in order")
    #expect(atOnce > 0 && atOnce < values.count, "\(atOnce) of \(values.count) at once")
    #expect(await peripheral.notificationsSent == values.count)

    // Longer than the MTU allows: the rule's error, as notify gives it.
    #expect(throws: GATTError.self) {
      try peripheral.notifyAtOnce([UInt8](repeating: 1, count: 98), characteristic: stream)
    }

    // BlueZ closes its end: nothing goes at once any more.
    close(fd)
    try await model.waitFor([true, false])
    #expect(try peripheral.notifyAtOnce([1], characteristic: stream) == false)
    await peripheral.stop()
  }

  @Test func withoutSocketsNotificationsChangeTheValueProperty() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try SubscriptionLog()
    let peripheral = try await BlueZPeripheral.host(
      model, on: bluez.adapter, bus: bus, name: "test", notificationSockets: false)
    let characteristic = try DBusRemoteObject(
      connection: bluez.bus, destination: bus.uniqueName, path: try characteristicPath(0))
    await #expect(throws: DBusError.self) {
      _ = try await bluez.acquireNotify(try characteristicPath(0), of: bus.uniqueName, mtu: 517)
    }
    _ = try await characteristic.call(BlueZ.gattCharacteristicInterface, "StartNotify")
    try await model.waitFor([true])
    try await peripheral.notify([7, 8, 9], characteristic: SubscriptionLog.notifying)
    #expect(try await characteristic.property(BlueZ.gattCharacteristicInterface, "Value") == .bytes([7, 8, 9]))
    #expect(await peripheral.acquiredNotificationSockets == 0)
    await peripheral.stop()
  }
}
