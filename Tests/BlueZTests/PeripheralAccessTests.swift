import BlueZ
import DBus
import DBusTestSupport
import GATT
import Testing

/// Only bluetoothd — the owner of `org.bluez` — may drive a hosted device:
/// any other connection calling its methods gets `AccessDenied`, and the
/// model never hears of it.
@Suite struct PeripheralAccessTests {
  actor Writable: PeripheralModel {
    static let service: BluetoothUUID = "d0e20011-0000-4000-8000-00000000c0de"
    static let command = CharacteristicAddress(service: service, characteristic: "d0e20012-0000-4000-8000-00000000c0de")
    nonisolated let profile: GATTProfile
    nonisolated let advertisement = AdvertisementData(localName: "Guarded")
    private(set) var writes: [[UInt8]] = []

    init() throws {
      profile = try GATTProfile([
        ServiceDefinition(
          Self.service, name: "Guarded",
          characteristics: [
            CharacteristicDefinition(
              Self.command.characteristic, name: "Command", properties: [.read, .write, .notify],
              initialValue: [7])
          ])
      ])
    }

    func write(characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID)
      async throws(ATTError)
    { writes.append(value) }
  }

  let privateBus: PrivateBus
  init() async throws { privateBus = try await PrivateBus() }

  @Test func callsFromAnyoneButBluetoothdAreDenied() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try Writable()
    let peripheral = try await BlueZPeripheral.host(model, on: bluez.adapter, bus: bus, name: "guarded")
    let path = try ObjectPath("/org/doppel/hci0/guarded/service0000/char0000")
    let central = try bluez.adapter.devicePath(for: FakeBlueZ.centralAddress)
    let options: DBusValue = .properties(["device": .objectPath(central)])

    let stranger = try await privateBus.connect()
    let strangers = try DBusRemoteObject(connection: stranger, destination: bus.uniqueName, path: path)
    for (method, arguments) in [
      ("ReadValue", [options]), ("WriteValue", [.bytes([1, 2]), options]), ("StartNotify", []), ("StopNotify", []),
      ("AcquireNotify", [options]), ("Confirm", []),
    ] as [(String, [DBusValue])] {
      do {
        _ = try await strangers.call(BlueZ.gattCharacteristicInterface, method, arguments)
        Issue.record("\(method) from a stranger was answered")
      } catch let error as DBusError {
        #expect(error.name == DBusError.Name.accessDenied, "\(method): \(error)")
        #expect(error.message.contains("only bluetoothd"))
      }
    }
    #expect(await model.writes.isEmpty)

    // bluetoothd itself is served.
    let daemon = try DBusRemoteObject(connection: bluez.bus, destination: bus.uniqueName, path: path)
    let read = try await daemon.call(BlueZ.gattCharacteristicInterface, "ReadValue", [options])
    #expect(read.first?.bytes == [7])
    _ = try await daemon.call(BlueZ.gattCharacteristicInterface, "WriteValue", [.bytes([3]), options])
    #expect(await model.writes == [[3]])
    await peripheral.stop()
    await stranger.close()
    await bus.close()
    await bluez.bus.close()
  }
}
