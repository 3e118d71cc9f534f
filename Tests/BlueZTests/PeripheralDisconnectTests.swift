import BlueZ
import DBus
import DBusTestSupport
import GATT
import Testing

/// A device that ends a link ends it at once for itself: bluetoothd takes
/// the link down 2 s after `Device1.Disconnect` (its DISCONNECT_TIMER), but
/// the model hears of the disconnect and sends nothing more meanwhile.
@Suite(.timeLimit(.minutes(1)))
struct PeripheralDisconnectTests {
  actor Recorder: PeripheralModel {
    nonisolated let profile: GATTProfile
    nonisolated let advertisement = AdvertisementData(localName: "Leaver")
    private(set) var disconnects: [DisconnectReason] = []

    init() throws {
      profile = try GATTProfile([
        ServiceDefinition(
          "d0e20041-0000-4000-8000-00000000c0de", name: "Leaver",
          characteristics: [
            CharacteristicDefinition(
              "d0e20042-0000-4000-8000-00000000c0de", name: "Value", properties: [.read], initialValue: [1])
          ])
      ])
    }

    func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async { disconnects.append(reason) }
  }

  @Test func theDeviceEndsTheLinkForItselfBeforeBluetoothdDoes() async throws {
    let privateBus = try await PrivateBus()
    let fake = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try Recorder()
    let peripheral = try await BlueZPeripheral.host(model, on: fake.adapter, bus: bus, name: "leaver")
    let value = try ObjectPath("/org/doppel/hci0/leaver/service0000/char0000")
    let centralPath = try fake.adapter.devicePath(for: FakeBlueZ.centralAddress)
    _ = try await DBusRemoteObject(connection: fake.bus, destination: bus.uniqueName, path: value)
      .call(BlueZ.gattCharacteristicInterface, "ReadValue", [.properties(["device": .objectPath(centralPath)])])
    let central = CentralID(FakeBlueZ.centralAddress)
    #expect(await peripheral.connectedCentrals == [central])

    await peripheral.disconnect(central)
    // The stand-in for bluetoothd still lists the central as connected.
    #expect(
      await fake.bus.propertyValue(at: centralPath, interface: BlueZ.deviceInterface, name: "Connected")
        == .boolean(true))
    #expect(await peripheral.connectedCentrals.isEmpty)
    var heard: [DisconnectReason] = []
    for _ in 0..<250 {
      heard = await model.disconnects
      if !heard.isEmpty { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(heard == [.local])
    await peripheral.stop()
  }
}
