import GATT
import Testing

@testable import Capture

/// Which of the services found a profile declares, from a capture or a live recording alike.
struct ImportedProfileTests {
  static func service(_ uuid: BluetoothUUID, place: String, _ characteristics: [BluetoothUUID])
    -> ImportedProfile.FoundService
  {
    ImportedProfile.FoundService(
      uuid: uuid, place: place,
      characteristics: characteristics.map {
        ImportedProfile.FoundCharacteristic(uuid: $0, properties: [.read], value: [1], descriptors: [], tag: place)
      })
  }

  @Test func ofTwoEqualServicesTheLaterIsDeclaredAndBluetoothdsOwnNever() {
    var profile = ImportedProfile()
    var notes: [String] = []
    // As the lab shows a device: GAP, bluetoothd's Device Information (PnP ID), then the device's own.
    let keys = profile.declare(
      [
        Self.service(BluetoothUUID(0x1800), place: "at position 1", [BluetoothUUID(0x2A00)]),
        Self.service(BluetoothUUID(0x180A), place: "at position 2", [BluetoothUUID(0x2A50)]),
        Self.service(BluetoothUUID(0x180A), place: "at position 3", [BluetoothUUID(0x2A27)]),
      ], notes: &notes)
    #expect(keys.count == 3)
    #expect(keys[0] == nil && keys[1] == nil)
    #expect(keys[2] == ["hardware-revision"])
    #expect(profile.services.map(\.uuid) == [BluetoothUUID(0x180A)])
    #expect(profile.services.first?.entries.map(\.uuid) == [BluetoothUUID(0x2A27)])
    #expect(
      notes == [
        "service 180a appears more than once; the one at position 3 (the most characteristics) is declared,"
          + " not the one at position 2"
      ])
  }

  @Test func moreCharacteristicsWinWhereverTheyAre() {
    var profile = ImportedProfile()
    var notes: [String] = []
    let keys = profile.declare(
      [
        Self.service(BluetoothUUID(0x180A), place: "at position 1", [BluetoothUUID(0x2A29), BluetoothUUID(0x2A24)]),
        Self.service(BluetoothUUID(0x180A), place: "at position 2", [BluetoothUUID(0x2A50)]),
      ], notes: &notes)
    #expect(keys[0] == ["manufacturer-name", "model-number"])
    #expect(keys[1] == nil)
    #expect(notes.count == 1)
  }
}
