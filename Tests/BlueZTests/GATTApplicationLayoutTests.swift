import BlueZ
import DBus
import DBusTestSupport
import GATT
import Testing

/// What bluetoothd reads of a hosted device's GATT application: objects in
/// the profile's order (it adds attributes in the order of the object
/// manager's paths), and a `Handle` property where the profile fixes one.
@Suite struct GATTApplicationLayoutTests {
  static let service: BluetoothUUID = "d0e20021-0000-4000-8000-00000000c0de"

  /// Twelve characteristics: more than ten, where `char10` would sort before `char2`.
  actor Twelve: PeripheralModel {
    nonisolated let profile: GATTProfile
    nonisolated let advertisement = AdvertisementData(localName: "Twelve")

    init(handles: Bool) throws {
      let characteristics = (0..<12).map { i in
        CharacteristicDefinition(
          try! BluetoothUUID(string: "d0e200\(30 + i)-0000-4000-8000-00000000c0de"), name: "C\(i)",
          properties: [.notify], handle: handles ? UInt16(0x0E + 3 * i) : nil)
      }
      profile = try GATTProfile([
        ServiceDefinition(
          GATTApplicationLayoutTests.service, name: "Twelve", handle: handles ? 0x000C : nil,
          characteristics: characteristics)
      ])
    }
  }

  let privateBus: PrivateBus
  init() async throws { privateBus = try await PrivateBus() }

  /// The application's objects as GetManagedObjects lists them, in its order.
  func managedObjects(of bus: DBusConnection, name: String) async throws -> [(
    path: String, properties: [String: DBusValue]
  )] {
    let root = try ObjectPath("/org/doppel/hci0/\(name)")
    let remote = try DBusRemoteObject(
      connection: try await privateBus.connect(), destination: bus.uniqueName, path: root)
    let reply = try await remote.call("org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
    guard case .dictionary(_, _, let objects)? = reply.first else {
      Issue.record("GetManagedObjects returned \(reply)")
      return []
    }
    return objects.compactMap { object in
      guard let path = object.key.objectPath, let interfaces = object.value.dictionary,
        let characteristic = interfaces[BlueZ.gattCharacteristicInterface]?.dictionary
          ?? interfaces[BlueZ.gattServiceInterface]?.dictionary
      else { return nil }
      return ("\(path)", characteristic.mapValues(\.unwrapped))
    }
  }

  @Test func objectsComeInTheProfilesOrderWithTheirFixedHandles() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let model = try Twelve(handles: true)
    let peripheral = try await BlueZPeripheral.host(model, on: bluez.adapter, bus: bus, name: "fixed")
    let objects = try await managedObjects(of: bus, name: "fixed")
    let characteristics = objects.filter { $0.path.contains("/char") }
    #expect(characteristics.count == 12)
    #expect(
      characteristics.map { $0.properties["UUID"]?.string?.lowercased() }
        == model.profile.services[0].characteristics.map { $0.uuid.uuidString.lowercased() })
    let expected: [DBusValue?] = (0..<12).map { .uint16(UInt16(0x0E + 3 * $0)) }
    #expect(characteristics.map { $0.properties["Handle"] } == expected)
    #expect(objects.first?.properties["Handle"] == .uint16(0x000C))
    await peripheral.stop()
  }

  @Test func noHandlePropertyWhereTheProfileFixesNone() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Twelve(handles: false), on: bluez.adapter, bus: bus, name: "free")
    let objects = try await managedObjects(of: bus, name: "free")
    #expect(objects.count == 13)
    #expect(objects.allSatisfy { $0.properties["Handle"] == nil })
    await peripheral.stop()
  }

  /// A stock bluetoothd's own GATT service holds 0x0008-0x0011: the device
  /// is hosted all the same, at handles bluetoothd chooses.
  @Test func aBluetoothdThatRefusesTheHandlesGetsTheProfileWithoutThem() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus, stockHandles: true)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Twelve(handles: true), on: bluez.adapter, bus: bus, name: "moved")
    #expect(bluez.calls.count("RegisterApplication") == 2)
    let objects = try await managedObjects(of: bus, name: "moved")
    #expect(objects.count == 13)
    #expect(objects.allSatisfy { $0.properties["Handle"] == nil })
    await peripheral.stop()
  }

  @Test func aFixedHandleCannotBeChangedOverTheBus() async throws {
    let bluez = try await FakeBlueZ.start(on: privateBus)
    let bus = try await privateBus.connect()
    let peripheral = try await BlueZPeripheral.host(
      try Twelve(handles: true), on: bluez.adapter, bus: bus, name: "kept")
    let path = try ObjectPath("/org/doppel/hci0/kept/service0000/char0000")
    let stranger = try DBusRemoteObject(
      connection: try await privateBus.connect(), destination: bus.uniqueName, path: path)
    await #expect(throws: DBusError.self) {
      try await stranger.setProperty(BlueZ.gattCharacteristicInterface, "Handle", .uint16(0x0001))
    }
    #expect(try await stranger.property(BlueZ.gattCharacteristicInterface, "Handle").unwrapped == .uint16(0x000E))
    await peripheral.stop()
  }
}
