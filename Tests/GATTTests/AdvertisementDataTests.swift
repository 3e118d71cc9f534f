import GATT
import Testing

struct AdvertisementDataTests {
  static let uart: BluetoothUUID = "713D0000-503E-4C75-BA94-3148F18D941E"

  @Test func aTenCharacterNameAndA128BitUUIDDoNotFitOneLegacyAdvertisement() throws {
    let blendMicro = AdvertisementData(localName: "BlendMicro", serviceUUIDs: [Self.uart])
    #expect(blendMicro.legacyPayloadSize == 33)
    #expect(!blendMicro.fitsLegacyAdvertisement)

    let layout = try blendMicro.legacyLayout()
    #expect(layout.advertisingDataSize == 21)
    #expect(layout.scanResponseSize == 12)
    #expect(layout.advertisingData.map(\.type) == [.flags, .completeServiceUUIDs128])
    #expect(layout.scanResponse.map(\.type) == [.completeLocalName])
    #expect(layout.advertisedFields.serviceUUIDs == [Self.uart])
    #expect(layout.advertisedFields.localName == nil)
    #expect(layout.scanResponseFields.localName == "BlendMicro")
    #expect(!layout.isLocalNameShortened)
    #expect(layout.advertisingDataBytes.prefix(5) == [0x02, 0x01, 0x06, 0x11, 0x07])
    #expect(Array(layout.advertisingDataBytes.suffix(16)) == Self.uart.bytes.reversed())
    #expect(layout.scanResponseBytes == [11, 0x09] + Array("BlendMicro".utf8))
    #expect(layout.advertisedFields.merging(layout.scanResponseFields) == blendMicro)
  }

  @Test func smallAdvertisementsStayInOnePacket() throws {
    let e4 = AdvertisementData(
      localName: "Empatica E4", serviceUUIDs: [BluetoothUUID(0x3EA0), BluetoothUUID(0x3E70)])
    #expect(e4.legacyPayloadSize == 3 + (2 + 4) + (2 + 11))
    #expect(e4.fitsLegacyAdvertisement)
    let layout = try e4.legacyLayout()
    #expect(layout.scanResponse.isEmpty)
    #expect(
      layout.advertisingData[1] == ADStructure(.completeServiceUUIDs16, [0xA0, 0x3E, 0x70, 0x3E]))
  }

  @Test func countsEveryKindOfField() {
    let data = AdvertisementData(
      localName: "X", serviceUUIDs: [BluetoothUUID(alias32: 0x0001_FFFF)],
      manufacturerData: [0x0059: [1, 2]],
      serviceData: [BluetoothUUID(0xFEAA): [9]], appearance: 0x0340, txPowerLevel: -4)
    // flags 3, 32-bit list 6, service data 2+2+1, manufacturer 2+2+2, appearance 4, tx power 3, name 3
    #expect(data.legacyPayloadSize == 3 + 6 + 5 + 6 + 4 + 3 + 3)
    #expect(data.structures.first { $0.type == .txPowerLevel }?.data == [0xFC])
  }

  @Test func shortensANameThatFitsNowhere() throws {
    let name = String(repeating: "N", count: 40)
    let data = AdvertisementData(localName: name, serviceUUIDs: [Self.uart])
    let layout = try data.legacyLayout()
    #expect(layout.isLocalNameShortened)
    #expect(
      layout.scanResponse == [
        ADStructure(.shortenedLocalName, Array(String(repeating: "N", count: 29).utf8))
      ])
    #expect(layout.scanResponseSize == 31)
  }

  @Test func refusesAFieldThatFitsNowhere() {
    let data = AdvertisementData(manufacturerData: [0x0059: [UInt8](repeating: 0, count: 30)])
    #expect(throws: LegacyAdvertisement.LayoutError.self) { try data.legacyLayout() }
  }

  @Test func scanFiltersMatchServicesAndNamePrefix() {
    let data = AdvertisementData(localName: "BlendMicro", serviceUUIDs: [Self.uart])
    #expect(ScanFilter.any.matches(data))
    #expect(ScanFilter(serviceUUIDs: [BluetoothUUID(0x180A), Self.uart]).matches(data))
    #expect(!ScanFilter(serviceUUIDs: [BluetoothUUID(0x180A)]).matches(data))
    #expect(ScanFilter(namePrefix: "Blend").matches(data))
    #expect(!ScanFilter(namePrefix: "blend").matches(data))
    #expect(!ScanFilter(serviceUUIDs: [Self.uart], namePrefix: "Emp").matches(data))
    #expect(!ScanFilter(namePrefix: "B").matches(AdvertisementData(serviceUUIDs: [Self.uart])))
  }
}
