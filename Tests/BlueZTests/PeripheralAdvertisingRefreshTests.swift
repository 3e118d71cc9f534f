import BlueZ
import DBus
import DBusTestSupport
import GATT
import Testing

/// While no central is connected, a hosted device registers its
/// advertisement anew every so often (btvirt shows an advertisement to a
/// scanner only when it is switched on). The copy goes on before the old one
/// comes off: btvirt leaves a central's connection pending for good when it
/// meets a peripheral with no advertisement on.
@Suite(.timeLimit(.minutes(1)))
struct PeripheralAdvertisingRefreshTests {
  struct Beacon: PeripheralModel {
    let profile: GATTProfile
    let advertisement = AdvertisementData(localName: "Beacon")

    init() throws {
      profile = try GATTProfile([
        ServiceDefinition(
          "d0e20031-0000-4000-8000-00000000c0de", name: "Beacon",
          characteristics: [
            CharacteristicDefinition(
              "d0e20032-0000-4000-8000-00000000c0de", name: "Value", properties: [.read], initialValue: [1])
          ])
      ])
    }
  }

  let privateBus: PrivateBus
  init() async throws { privateBus = try await PrivateBus() }

  /// Polls `condition` every 10 ms for up to 10 s.
  func eventually(_ condition: () async -> Bool) async throws -> Bool {
    for _ in 0..<1000 {
      if await condition() { return true }
      try await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
  }

  @Test func theCopyGoesOnBeforeTheOldOneComesOff() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Beacon(), on: bluez.adapter, bus: bus, name: "beacon", advertisingRefresh: .milliseconds(50))
    // Three refreshes: each a registration and an unregistration.
    #expect(try await eventually { bluez.advertisements.counts.count >= 7 })
    #expect(bluez.advertisements.counts.allSatisfy { $0 >= 1 }, "\(bluez.advertisements.counts)")
    #expect(bluez.calls.count("RegisterAdvertisement") >= 4)

    // Stopping takes the advertisement on the air off, whichever copy it is.
    await peripheral.stop()
    #expect(bluez.advertisements.registered.isEmpty)
    #expect(bluez.calls.all.last == "UnregisterApplication")
    await bus.close()
    await bluez.bus.close()
  }

  /// Without room for a second advertisement it is switched off and on, and stays on.
  @Test func withoutRoomForACopyItIsSwitchedOffAndOn() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus, maxAdvertisements: 1)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Beacon(), on: bluez.adapter, bus: bus, name: "beacon", advertisingRefresh: .milliseconds(50))
    #expect(try await eventually { bluez.advertisements.counts.count >= 5 })
    #expect(bluez.advertisements.counts.prefix(5) == [1, 0, 1, 0, 1])
    await peripheral.stop()
    #expect(bluez.advertisements.registered.isEmpty)
    await bus.close()
    await bluez.bus.close()
  }

  @Test func noRefreshRegistersOnce() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Beacon(), on: bluez.adapter, bus: bus, name: "beacon", advertisingRefresh: nil)
    try await Task.sleep(for: .milliseconds(300))
    #expect(bluez.calls.all == ["RegisterApplication", "RegisterAdvertisement"])
    await peripheral.stop()
    await bus.close()
    await bluez.bus.close()
  }
}
