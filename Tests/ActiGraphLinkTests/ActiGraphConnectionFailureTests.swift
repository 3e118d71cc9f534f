import ActiGraphLink
import ActiGraphLinkSDK
import Foundation
import GATT
import Testing

/// Connections that fail or end: codes 5, 7 and 9.
@Suite(.timeLimit(.minutes(2)))
struct ActiGraphConnectionFailureTests {
  /// Advertises the Link's service and a Link serial, but has no such service.
  struct Impostor: PeripheralModel {
    let profile = try! GATTProfile([
      ServiceDefinition(
        BluetoothUUID(0x180F),
        characteristics: [
          CharacteristicDefinition(BluetoothUUID(0x2A19), name: "Battery", properties: [.read], initialValue: [80])
        ])
    ])
    let advertisement = AdvertisementData(
      localName: "TAS1D83493233",
      serviceUUIDs: [BluetoothUUID(high: 0x5A6C_0001_7E3A_4B8D, low: 0x9F21_AC7A_61A4_E000)])
  }

  @Test func aDeviceWithoutTheServiceIsCode9() async throws {
    let rig = try ActiGraphRig()
    try await rig.air.host(Impostor())
    await rig.sdk.enumerateDevices(1)
    await rig.wait { $0.contains { if case .devices = $0.value { true } else { false } } }
    await rig.sdk.connectToDevice("TAS1D83493233")
    let last = try #require(await rig.current().last)
    #expect(
      ActiGraphRig.matches(
        last, #"{"error": {"code": 9, "description": "Invalid ActiGraph Device", "extra": "TAS1D83493233"}}"#),
      "\(last.json)")
    #expect(await rig.sdk.getConnectedDevice() == nil)
  }

  @Test func aDeviceGoneSinceTheScanIsCode5() async throws {
    let rig = try ActiGraphRig()
    let id = try await rig.air.host(ActiGraphLink())
    await rig.sdk.enumerateDevices(1)
    await rig.wait { $0.contains { if case .devices = $0.value { true } else { false } } }
    await rig.air.remove(id)
    await rig.sdk.connectToDevice("TAS1A14758923")
    let last = try #require(await rig.current().last)
    #expect(ActiGraphRig.errorCode(last) == 5, "\(last.json)")
    #expect(
      (ActiGraphRig.parsed(last.json)?["error"] as? NSDictionary)?["description"] as? String
        == "Device Connection Failed")
  }

  @Test func aLinkLostDuringADownloadIsCode7ThenDisconnected() async throws {
    let rig = try ActiGraphRig(mtu: 23)
    let id = try await rig.air.host(
      ActiGraphLink(configuration: .init(serialNumber: "TAS1D03845638")), preferredMTU: 23)
    await rig.sdk.enumerateDevices(1)
    await rig.wait { $0.contains { if case .devices = $0.value { true } else { false } } }
    await rig.sdk.connectToDevice("TAS1D03845638")
    await rig.sdk.configureDevice(
      #"{"epoch": {"startDateTime": "07-20-2015 04:00:00", "stopDateTime": "07-21-2015 03:59:00"}}"#)
    await rig.clock.advance(by: .seconds(2))
    await rig.air.loseLinks(to: id)
    let messages = await rig.wait { $0.contains { if case .deviceDisconnected = $0.value { true } else { false } } }
    let codes = messages.compactMap(ActiGraphRig.errorCode)
    #expect(codes == [7])
    #expect(messages.last.map { ActiGraphRig.matches($0, #"{"deviceDisconnected": "TAS1D03845638"}"#) } == true)
    #expect(!messages.contains { if case .epochs = $0.value { true } else { false } })
  }
}
