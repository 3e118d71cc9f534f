import BlueZ
import DBus
import DBusTestSupport
import GATT
import Synchronization
import Testing

/// bluetoothd may go away (a crash, a restart) under a hosted device: the
/// device reports its centrals gone and registers again, by itself, with the
/// bluetoothd that takes `org.bluez` next. Here a stand-in for bluetoothd on
/// a private bus goes away and another takes its name; the lab restarts the
/// real one (ci/checks/bluetoothd-restart).
@Suite(.timeLimit(.minutes(1)))
struct PeripheralRestartTests {
  actor Recorder: PeripheralModel {
    nonisolated let profile: GATTProfile
    nonisolated let advertisement = AdvertisementData(localName: "Phoenix")
    private(set) var hostEvents: [HostEvent] = []
    private(set) var disconnects: [DisconnectReason] = []

    init() throws {
      profile = try GATTProfile([
        ServiceDefinition(
          "d0e20021-0000-4000-8000-00000000c0de", name: "Phoenix",
          characteristics: [
            CharacteristicDefinition(
              "d0e20022-0000-4000-8000-00000000c0de", name: "Value", properties: [.read], initialValue: [1])
          ])
      ])
    }

    func hostEvent(_ event: HostEvent) async { hostEvents.append(event) }
    func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async { disconnects.append(reason) }
  }

  let privateBus: PrivateBus
  init() async throws { privateBus = try await PrivateBus() }

  @Test func aDeviceRegistersAgainWithTheNextBluetoothd() async throws {
    let first = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try Recorder()
    let peripheral = try await BlueZPeripheral.host(model, on: first.adapter, bus: bus, name: "phoenix")
    #expect(first.calls.all == ["RegisterApplication", "RegisterAdvertisement"])

    // A central reads: the device knows it as connected.
    let value = try ObjectPath("/org/doppel/hci0/phoenix/service0000/char0000")
    let central = try first.adapter.devicePath(for: FakeBlueZ.centralAddress)
    _ = try await DBusRemoteObject(connection: first.bus, destination: bus.uniqueName, path: value)
      .call(BlueZ.gattCharacteristicInterface, "ReadValue", [.properties(["device": .objectPath(central)])])
    #expect(await peripheral.connectedCentrals.count == 1)

    // bluetoothd dies: the link is lost, and the model hears so.
    await first.bus.close()
    #expect(try await eventually { await model.hostEvents == [.stackLost] })
    #expect(await model.disconnects == [.linkLoss])
    #expect(await peripheral.connectedCentrals.isEmpty)

    // A new bluetoothd: registered again, application and advertisement.
    let second = try await FakeBlueZ.start(on: privateBus)
    #expect(try await eventually { second.calls.all == ["RegisterApplication", "RegisterAdvertisement"] })
    #expect(try await eventually { await model.hostEvents.count == 2 })
    guard case .registeredAgain = await model.hostEvents.last else {
      Issue.record("expected registeredAgain, got \(await model.hostEvents)")
      return
    }
    // Only the new bluetoothd may drive the device now.
    let read = try await DBusRemoteObject(connection: second.bus, destination: bus.uniqueName, path: value)
      .call(BlueZ.gattCharacteristicInterface, "ReadValue", [.properties([:])])
    #expect(read.first?.bytes == [1])

    await peripheral.stop()
    #expect(second.calls.all.suffix(2) == ["UnregisterAdvertisement", "UnregisterApplication"])
    await bus.close()
    await second.bus.close()
  }

  /// A bluetoothd that has just taken the name may not have exported its
  /// advertising manager yet: registering again waits for it, and registers
  /// the application once.
  @Test func registeringAgainWaitsForABluetoothdStillStarting() async throws {
    let first = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try Recorder()
    let peripheral = try await BlueZPeripheral.host(model, on: first.adapter, bus: bus, name: "patient")
    await first.bus.close()
    #expect(try await eventually { await model.hostEvents == [.stackLost] })

    let second = try await FakeBlueZ.start(on: privateBus, advertisingNotYet: 2)
    #expect(
      try await eventually {
        second.calls.all == [
          "RegisterApplication", "RegisterAdvertisement", "RegisterAdvertisement", "RegisterAdvertisement",
        ]
      })
    #expect(try await eventually { await model.hostEvents.count == 2 })
    guard case .registeredAgain = await model.hostEvents.last else {
      Issue.record("expected registeredAgain, got \(await model.hostEvents)")
      return
    }
    await peripheral.stop()
    await bus.close()
    await second.bus.close()
  }

  /// The advertisement refresh ticks while registering again waits for
  /// bluetoothd: for its answer, or for its advertising manager. The
  /// advertisement is registered once, not twice (bluetoothd refuses the
  /// second with `AlreadyExists`, and registering again failed so in CI).
  @Test func theRefreshDoesNotRegisterTheAdvertisementTwiceWhileRegisteringAgain() async throws {
    let first = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try Recorder()
    let peripheral = try await BlueZPeripheral.host(
      model, on: first.adapter, bus: bus, name: "hurried", advertisingRefresh: .milliseconds(50))
    await first.bus.close()
    #expect(try await eventually { await model.hostEvents == [.stackLost] })

    // No central is connected, so the refresh ticks; the advertising manager
    // is not there at first, and answers slowly once it is.
    let second = try await FakeBlueZ.start(
      on: privateBus, advertisingNotYet: 2, advertisingTime: .milliseconds(300), centralConnectsAt: .max)
    #expect(try await eventually { await model.hostEvents.count == 2 })
    guard case .registeredAgain = await model.hostEvents.last else {
      Issue.record("expected registeredAgain, got \(await model.hostEvents)")
      return
    }
    #expect(second.calls.count("org.bluez.Error.AlreadyExists") == 0, "\(second.calls.all)")
    #expect(await peripheral.isAdvertising)
    await peripheral.stop()
    await bus.close()
    await second.bus.close()
  }
}
