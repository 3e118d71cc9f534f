import BlueZ
import DBus
import DBusTestSupport
import GATT
import Testing

/// While no central is connected, a hosted device switches its
/// advertisement off and on every so often (btvirt shows an advertisement
/// to a scanner only when it is switched on), at the interval asked, or
/// never.
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

  @Test func itIsSwitchedOffAndOnAtTheIntervalAsked() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Beacon(), on: bluez.adapter, bus: bus, name: "beacon", advertisingRefresh: .milliseconds(50))
    let twoRefreshes = [
      "RegisterApplication", "RegisterAdvertisement", "UnregisterAdvertisement", "RegisterAdvertisement",
      "UnregisterAdvertisement", "RegisterAdvertisement",
    ]
    #expect(try await eventually { bluez.calls.all.count >= twoRefreshes.count })
    #expect(Array(bluez.calls.all.prefix(twoRefreshes.count)) == twoRefreshes)
    // Stopping takes it off the air, whichever state the refresh left it in.
    await peripheral.stop()
    #expect(bluez.calls.count("RegisterAdvertisement") == bluez.calls.count("UnregisterAdvertisement"))
    #expect(bluez.calls.all.last == "UnregisterApplication")
    await bus.close()
    await bluez.bus.close()
  }

  /// Waits past the default interval: a device asked for no refresh must not fall back to it.
  @Test func noRefreshRegistersOnce() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Beacon(), on: bluez.adapter, bus: bus, name: "beacon", advertisingRefresh: nil)
    try await Task.sleep(for: BlueZPeripheral.readvertiseInterval + .milliseconds(500))
    #expect(bluez.calls.all == ["RegisterApplication", "RegisterAdvertisement"])
    await peripheral.stop()
    await bus.close()
    await bluez.bus.close()
  }
}
