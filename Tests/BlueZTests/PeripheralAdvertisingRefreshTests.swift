import BlueZ
import DBus
import DBusTestSupport
import GATT
import Testing

/// While no central is connected, a hosted device registers its
/// advertisement anew every so often (btvirt shows an advertisement to a
/// scanner only when it is switched on), at the interval asked, or never;
/// never leaving it off, nor while a link it ended is still up.
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

  /// Each refresh registers a copy before it unregisters the one it
  /// replaces, so the device always has a connectable advertisement.
  @Test func aCopyGoesOnBeforeTheOldOneComesOff() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Beacon(), on: bluez.adapter, bus: bus, name: "beacon", advertisingRefresh: .milliseconds(50))
    let twoRefreshes = [
      "RegisterApplication", "RegisterAdvertisement", "RegisterAdvertisement", "UnregisterAdvertisement",
      "RegisterAdvertisement", "UnregisterAdvertisement",
    ]
    #expect(try await eventually { bluez.calls.all.count >= twoRefreshes.count })
    let calls = Array(bluez.calls.withPaths.prefix(twoRefreshes.count))
    #expect(calls.map(\.name) == twoRefreshes)
    #expect(Self.registeredAfterEachCall(calls).dropFirst(2).allSatisfy { $0.count >= 1 })
    // Each refresh takes off the advertisement that was on before it.
    #expect(calls[3].path == calls[1].path && calls[5].path == calls[2].path)
    #expect(Set(calls.compactMap(\.path)).count == 4, "the application and three advertisements")
    // Stopping takes it off the air, whichever state the refresh left it in.
    await peripheral.stop()
    #expect(Self.registeredAfterEachCall(bluez.calls.withPaths).last?.isEmpty == true)
    #expect(bluez.calls.all.last == "UnregisterApplication")
    await bus.close()
    await bluez.bus.close()
  }

  /// A bluetoothd with room for one advertisement only: the refresh
  /// switches it off and on instead, and it is never left off.
  @Test func withNoRoomForACopyItIsSwitchedOffAndOn() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus, maxAdvertisements: 1)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Beacon(), on: bluez.adapter, bus: bus, name: "beacon", advertisingRefresh: .milliseconds(50))
    let oneRefresh = [
      "RegisterApplication", "RegisterAdvertisement", "RegisterAdvertisement", "UnregisterAdvertisement",
      "RegisterAdvertisement",
    ]
    #expect(try await eventually { bluez.calls.all.count >= oneRefresh.count })
    let calls = Array(bluez.calls.withPaths.prefix(oneRefresh.count))
    #expect(calls.map(\.name) == oneRefresh)
    // The refused copy changed nothing; the one advertisement went off and on.
    #expect(calls[2].path != calls[1].path)
    #expect(calls[3].path == calls[1].path && calls[4].path == calls[1].path)
    await peripheral.stop()
    // Every registration but the refused copies was taken back.
    let refused = bluez.calls.withPaths.filter { $0.name == "RegisterAdvertisement" && $0.path != calls[1].path }
    #expect(
      bluez.calls.count("UnregisterAdvertisement") == bluez.calls.count("RegisterAdvertisement") - refused.count)
    #expect(bluez.calls.withPaths.last { $0.name == "UnregisterAdvertisement" }?.path == calls[1].path)
    await bus.close()
    await bluez.bus.close()
  }

  /// While a link the device ended is still up (bluetoothd answers
  /// `Device1.Disconnect` only once the kernel has taken it down), the
  /// advertisement stays as it is: the kernel switches on again the
  /// advertisement that link came from when it goes down.
  @Test func noRefreshUntilALinkTheDeviceEndedIsDown() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus, disconnectTime: .seconds(1))
    let bus = try await privateBus.connect()
    // The interval is short, so a refresh would fall inside the link's last second if one could.
    let peripheral = try await BlueZPeripheral.host(
      try Beacon(), on: bluez.adapter, bus: bus, name: "beacon", advertisingRefresh: .milliseconds(50))
    let value = try ObjectPath("/org/doppel/hci0/beacon/service0000/char0000")
    let centralPath = try bluez.adapter.devicePath(for: FakeBlueZ.centralAddress)
    _ = try await DBusRemoteObject(connection: bluez.bus, destination: bus.uniqueName, path: value)
      .call(BlueZ.gattCharacteristicInterface, "ReadValue", [.properties(["device": .objectPath(centralPath)])])
    let central = CentralID(FakeBlueZ.centralAddress)
    #expect(await peripheral.connectedCentrals == [central])

    await peripheral.disconnect(central)
    #expect(try await eventually { bluez.calls.count("RegisterAdvertisement") >= 3 })
    let calls = bluez.calls.all
    let asked = try #require(calls.firstIndex(of: "Disconnect"))
    let answered = try #require(calls.firstIndex(of: "Disconnected"))
    #expect(
      !calls[asked..<answered].contains { $0.hasSuffix("Advertisement") },
      "the advertisement changed while the link was still up: \(calls)")
    // Once it is down, a refresh comes at once.
    #expect(calls[answered + 1] == "RegisterAdvertisement", "\(calls)")
    await peripheral.stop()
    await bus.close()
    await bluez.bus.close()
  }

  /// A central that connects while a refresh registers its copy may have
  /// come from the old advertisement, and the kernel switches that one on
  /// again when the link ends (non-connectably, from a random address, if
  /// it is gone): it stays registered until the central leaves. Whether
  /// its link is reported before bluetoothd answers the registration or a
  /// moment after (100 ms; the lab saw 55 ms).
  @Test(arguments: [0, 100])
  func aCentralThatConnectsDuringARefreshKeepsTheOldCopyUntilItLeaves(reportedAfter: Int) async throws {
    let bluez = try await FakeBlueZ.start(
      on: privateBus, centralConnectsAt: 2, centralConnectsAfter: .milliseconds(reportedAfter))
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Beacon(), on: bluez.adapter, bus: bus, name: "beacon", advertisingRefresh: .milliseconds(50))
    let central = CentralID(FakeBlueZ.centralAddress)
    #expect(try await eventually { await peripheral.connectedCentrals == [central] })
    // Longer than the wait for a link's report and several refresh intervals.
    try await Task.sleep(for: .milliseconds(600))
    let whileConnected = bluez.calls.withPaths
    #expect(whileConnected.map(\.name) == ["RegisterApplication", "RegisterAdvertisement", "RegisterAdvertisement"])
    let (first, second) = (whileConnected[1].path, whileConnected[2].path)

    try await bluez.bus.updateProperties(
      at: try bluez.adapter.devicePath(for: FakeBlueZ.centralAddress), interface: BlueZ.deviceInterface,
      ["Connected": .boolean(false)])
    #expect(try await eventually { bluez.calls.count("UnregisterAdvertisement") >= 2 })
    let calls = bluez.calls.withPaths
    #expect(calls[3].name == "RegisterAdvertisement")
    #expect(Set(calls[4...5].map(\.path)) == [first, second], "both replaced copies go once the central left")
    #expect(Self.registeredAfterEachCall(calls)[5] == [calls[3].path])
    await peripheral.stop()
    #expect(Self.registeredAfterEachCall(bluez.calls.withPaths).last?.isEmpty == true)
    await bus.close()
    await bluez.bus.close()
  }

  /// The advertisements registered after each call, replayed from the log.
  static func registeredAfterEachCall(_ calls: [(name: String, path: String?)]) -> [Set<String?>] {
    var registered: Set<String?> = []
    return calls.map { call in
      if call.name == "RegisterAdvertisement" { registered.insert(call.path) }
      if call.name == "UnregisterAdvertisement" { registered.remove(call.path) }
      return registered
    }
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
  /// A beacon whose battery is flat when it is hosted: it switches its
  /// advertising off while starting, and on when `charge()` is called.
  actor FlatBeacon: PeripheralModel {
    nonisolated let profile: GATTProfile
    nonisolated let advertisement = AdvertisementData(localName: "Flat")
    private var host: (any PeripheralHost)?

    init() throws { profile = try Beacon().profile }

    func start(host: any PeripheralHost) async {
      self.host = host
      await host.setAdvertisingEnabled(false)
    }

    func stop() async {}

    func charge() async { await host?.setAdvertisingEnabled(true) }
  }

  /// The device starts before it goes on the air, so one that starts
  /// switched off is never seen advertising, refreshes included.
  @Test func aDeviceThatStartsSwitchedOffNeverAdvertisesUntilSwitchedOn() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try FlatBeacon()
    let peripheral = try await BlueZPeripheral.host(
      model, on: bluez.adapter, bus: bus, name: "flat", advertisingRefresh: .milliseconds(50))
    try await Task.sleep(for: .milliseconds(400))
    #expect(bluez.calls.all == ["RegisterApplication"])
    await model.charge()
    #expect(try await eventually { bluez.calls.count("RegisterAdvertisement") >= 2 }, "on the air, and refreshed")
    await peripheral.stop()
    await bus.close()
    await bluez.bus.close()
  }
}
