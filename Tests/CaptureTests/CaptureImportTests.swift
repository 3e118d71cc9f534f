import Capture
import Foundation
import GATT
import Testing

/// Captures written by `CaptureFixture` read down to ATT: the peripheral,
/// its advertising, database, notifications, writes and disconnection, and
/// the scenario files made from them.
struct CaptureImportTests {
  static let address = DeviceAddress("00:AA:01:00:00:23")!

  func session(_ datalink: CaptureFixture.Datalink) throws -> CapturedPeripheral {
    var capture = CaptureFixture(datalink)
    if datalink == .monitor { capture.newIndex(0, address: CaptureSession.central) }
    CaptureSession.write(into: &capture)
    let read = try Capture(bytes: capture.bytes)
    #expect(read.talkingPeripherals.count == 1)
    return try #require(read.peripheral(Self.address))
  }

  @Test(arguments: [CaptureFixture.Datalink.monitor, .h4])
  func findsEverythingTheSessionHas(_ datalink: CaptureFixture.Datalink) throws {
    let peripheral = try session(datalink)
    #expect(peripheral.advertisement.localName == "Sensor-7")
    #expect(peripheral.advertisement.serviceUUIDs == [BluetoothUUID(0x180D)])
    #expect(peripheral.advertisement.manufacturerData[0x0059] == [0xCA, 0xFE])
    #expect(peripheral.connections.count == 1)
    let connection = peripheral.connections[0]
    #expect(connection.seenFromCentral)
    #expect(connection.mtu == 247)
    let database = connection.database
    #expect(
      database.services.values.map(\.uuid).sorted()
        == [BluetoothUUID(0x1800), BluetoothUUID(0x180D), CaptureSession.customService].sorted())
    #expect(database.characteristics[0x0012]?.properties == [.notify])
    #expect(database.characteristics[0x0019]?.properties == [.write, .writeWithoutResponse])
    #expect(database.characteristics[0x001B]?.uuid == "6e400003-b5a3-f393-e0a9-e50e24dcca9e")
    #expect(database.descriptors[0x001D] == .characteristicUserDescription)
    #expect(database.values[0x0015] == [0x01])
    #expect(database.values[0x001D] == Array("control".utf8))
    let notifications = connection.events.compactMap { time, event -> (Int64, [UInt8])? in
      if case .notification(0x0012, let value) = event { return (time, value) }
      return nil
    }
    #expect(notifications.count == 10)
    #expect(notifications[5].1 == CaptureSession.longValue, "the fragmented notification is whole")
    #expect(notifications[1].0 - notifications[0].0 == 100_000)
    let writes = connection.events.compactMap { _, event -> CapturedConnection.Event? in
      if case .write = event { return event }
      return nil
    }
    #expect(
      writes == [
        .write(handle: 0x0019, value: [0x01], withResponse: true, answer: 0),
        .write(handle: 0x0019, value: [0xFF, 0x00], withResponse: true, answer: 0x80),
        .write(handle: 0x0019, value: [0x02], withResponse: false, answer: nil),
      ])
    #expect(connection.events.contains { $0.event == .subscription(handle: 0x0012, value: 1) })
    #expect(connection.events.contains { $0.event == .subscription(handle: 0x001B, value: 2) })
    #expect(connection.events.contains { $0.event == .indication(handle: 0x001B, value: [0x07]) })
    #expect(connection.disconnection?.reason == 0x08)
  }

  @Test func theScenarioReplaysFromTheFirstSubscriptionAndDropsTheLinkThere() throws {
    let imported = try ImportedScenario(peripheral: try session(.monitor), source: "session.btsnoop")
    let files = Dictionary(uniqueKeysWithValues: imported.files.map { ($0.name, $0.text) })
    let scenario = try #require(files[ImportedScenario.scenarioFile])
    #expect(scenario.contains("model: generic"))
    #expect(scenario.contains("profile: profile.yaml"))
    #expect(scenario.contains("- {after: subscribed, delay: 2500000us, do: disconnect}"))
    #expect(scenario.contains("0x08 (connection timeout (link lost))"))
    #expect(scenario.contains("- central-subscribed: heart-rate-measurement"))
    #expect(scenario.contains("- central-wrote: {characteristic: 6e400002, hex: \"^ff00$\"}"))
    let profile = try #require(files[ImportedScenario.profileFile])
    #expect(profile.contains("name: \"Sensor-7\""))
    #expect(profile.contains("- {company: 89, data: \"cafe\"}"))
    #expect(!profile.contains("uuid: 1800"), "bluetoothd's own GAP service is not declared")
    #expect(profile.contains("value: \"01\""))
    #expect(profile.contains("- {uuid: 2901, value: \"636f6e74726f6c\"}"))
    #expect(profile.contains("properties: [write-without-response, write]"))
    #expect(profile.contains("- {file: notifications.csv, from: subscribed}"))
    #expect(profile.contains("- {characteristic: 6e400002, value: \"ff00\", error: \"0x80\"}"))
    let recording = try #require(files[ImportedScenario.recordingFile]).split(separator: "\n")
    #expect(recording.first == "time,characteristic,value")
    #expect(recording[1] == "0.100000,heart-rate-measurement,063c")
    #expect(recording[6] == "0.600000,heart-rate-measurement," + CaptureSession.longValue.map { hex($0) }.joined())
    #expect(recording.last?.hasSuffix(",6e400003,07") == true)
    let writes = try #require(files[ImportedScenario.writesFile]).split(separator: "\n")
    #expect(writes.count == 4)
    #expect(writes[2].hasSuffix(",6e400002,ff00,request,error 0x80"))
    #expect(writes[3].hasSuffix(",6e400002,02,command,none"))
  }

  /// bluetoothd as the central subscribes to Service Changed and writes
  /// Client Supported Features right after connecting: that is the central's
  /// stack, not the app; the replaying central's stack does it by itself.
  /// Kept, it moved the first subscription (the replay's anchor) and made
  /// expectations no central's app meets (`handle-0102`, seen in the lab).
  @Test func theCentralStacksOwnGATTTrafficIsLeftOut() throws {
    var capture = CaptureFixture(.monitor)
    capture.newIndex(0, address: CaptureSession.central)
    CaptureSession.write(into: &capture, stackTraffic: true)
    let peripheral = try #require(try Capture(bytes: capture.bytes).peripheral(Self.address))
    let imported = try ImportedScenario(peripheral: peripheral, source: "stack.btsnoop")
    let files = Dictionary(uniqueKeysWithValues: imported.files.map { ($0.name, $0.text) })
    let scenario = try #require(files[ImportedScenario.scenarioFile])
    #expect(scenario.contains("- {after: subscribed, delay: 2500000us, do: disconnect}"))
    #expect(!scenario.contains("handle-"))
    #expect(!scenario.contains("2a05"))
    let profile = try #require(files[ImportedScenario.profileFile])
    #expect(!profile.contains("uuid: 1801"))
    #expect(!profile.contains("handle-"))
    let writes = try #require(files[ImportedScenario.writesFile]).split(separator: "\n")
    #expect(writes.count == 4, "the app's three writes and the header")
    #expect(
      imported.notes.contains {
        $0.hasPrefix("2 ATT exchanges in the GAP and GATT services (handles 0x000b, 0x000d) are left out")
      }, "\(imported.notes)")
    let recording = try #require(files[ImportedScenario.recordingFile]).split(separator: "\n")
    #expect(recording[1] == "0.100000,heart-rate-measurement,063c")
  }

  @Test func bothSidesOfALinkAreOnePeripheralSeenFromTheCentral() throws {
    var capture = CaptureFixture(.monitor)
    capture.newIndex(0, address: CaptureSession.peripheral)
    capture.newIndex(1, address: CaptureSession.central)
    var central = capture
    CaptureSession.write(into: &capture, controller: 0, centralSide: false)
    CaptureSession.write(into: &central, controller: 1, centralSide: true)
    // Interleave nothing: the peripheral's side, then the central's, in one file.
    capture.append(recordsOf: central)
    let read = try Capture(bytes: capture.bytes)
    #expect(read.talkingPeripherals.map(\.address) == [Self.address])
    let peripheral = try #require(read.peripheral(Self.address))
    #expect(peripheral.connections.count == 1)
    #expect(peripheral.connections[0].seenFromCentral)
    #expect(peripheral.advertisement.localName == "Sensor-7")
  }

  @Test func aCaptureWithNoATTTrafficSaysSo() throws {
    var capture = CaptureFixture(.monitor)
    capture.advertisingReport(CaptureSession.peripheral, CaptureSession.advertising)
    capture.connected(0x40, peer: CaptureSession.peripheral)
    capture.disconnected(0x40, reason: 0x13)
    let read = try Capture(bytes: capture.bytes)
    #expect(read.talkingPeripherals.isEmpty)
    let peripheral = try #require(read.peripheral(Self.address))
    #expect(throws: CaptureError(.noATTTraffic, "the capture has no ATT traffic with 00:AA:01:00:00:23")) {
      try ImportedScenario(peripheral: peripheral, source: "empty")
    }
  }

  private func hex(_ byte: UInt8) -> String {
    let text = String(byte, radix: 16)
    return text.count == 1 ? "0" + text : text
  }
}

/// A real capture: two sessions the lab recorded with btmon (monitor
/// datalink), cut from a longer hci.btsnoop to one connection each.
struct LabCaptureTests {
  static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Captures/lab-two-sessions.btsnoop").path

  @Test func bothPeripheralsWithTheirSessions() throws {
    let capture = try Capture.read(path: Self.path)
    #expect(capture.datalink == .monitor)
    #expect(capture.records == 179)
    #expect(capture.talkingPeripherals.map(\.address.description) == ["00:AA:01:02:00:02", "00:AA:01:00:00:00"])
    let e4 = try #require(capture.peripheral(DeviceAddress("00:AA:01:02:00:02")!))
    #expect(e4.advertisement.localName == "Empatica E4")
    #expect(e4.advertisement.serviceUUIDs == [BluetoothUUID(0x3EA0)])
    let connection = try #require(e4.connections.first)
    #expect(connection.seenFromCentral)
    #expect(connection.disconnection?.reason == 0x13)
    let bvp = try #require(connection.database.characteristics.values.first { $0.uuid == BluetoothUUID(0x3EA1) })
    #expect(bvp.properties == [.notify])
    let notifications = connection.events.filter {
      if case .notification(bvp.valueHandle, _) = $0.event { return true }
      return false
    }
    #expect(notifications.count == 22)
    // The E4's BVP packets count up by 8 in their first byte.
    let counters = notifications.compactMap {
      if case .notification(_, let value) = $0.event { value.first } else { nil }
    }
    #expect(counters == (0..<22).map { UInt8(truncatingIfNeeded: $0 * 8) })
  }
}
