import GATT

/// A GATT session to write into fixture captures: a heart-rate sensor at
/// 00:AA:01:00:00:23 advertising as "Sensor-7", discovered, read, subscribed
/// to, written (accepted, refused, without response), notifying (once in
/// fragments) and indicating, then lost (reason 0x08) 2.5 s after the first
/// subscription. With `stackTraffic`, the database also has a GATT service
/// (Service Changed, Client Supported Features) that the central's stack
/// subscribes to and writes before the app subscribes, as bluetoothd does.
enum CaptureSession {
  static let peripheral: [UInt8] = [0x00, 0xAA, 0x01, 0x00, 0x00, 0x23]
  static let central: [UInt8] = [0x00, 0xAA, 0x01, 0x00, 0x00, 0x99]
  static let customService: BluetoothUUID = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
  static let longValue: [UInt8] = (0..<100).map { UInt8($0) }

  static func le16(_ value: UInt16) -> [UInt8] { CaptureFixture.le16(value) }

  /// The advertising data: flags, name, the heart-rate service, manufacturer data.
  static let advertising: [UInt8] =
    [2, 0x01, 0x06] + [9, 0x09] + Array("Sensor-7".utf8) + [3, 0x03, 0x0D, 0x18] + [5, 0xFF, 0x59, 0x00, 0xCA, 0xFE]

  /// Writes the session as one controller sees it: the central's side
  /// (`centralSide`) or the peripheral's; the link on `handle`.
  static func write(
    into capture: inout CaptureFixture, controller: UInt16 = 0, handle: UInt16 = 0x0040, centralSide: Bool = true,
    disconnect: Bool = true, fragmentLong: Bool = true, stackTraffic: Bool = false
  ) {
    func central(_ pdu: [UInt8]) {
      capture.att(handle, pdu, fromPeripheral: false, centralSide: centralSide, controller: controller)
      capture.wait(1_000)
    }
    func peripheral(_ pdu: [UInt8], fragment: Int? = nil) {
      capture.att(
        handle, pdu, fromPeripheral: true, centralSide: centralSide, fragment: fragment, controller: controller)
      capture.wait(1_000)
    }
    if centralSide {
      capture.advertisingReport(Self.peripheral, advertising, controller: controller)
    } else {
      capture.command(
        0x2008, [UInt8(advertising.count)] + advertising + [UInt8](repeating: 0, count: 31 - advertising.count),
        controller: controller)
    }
    capture.wait(10_000)
    capture.connected(
      handle, peer: centralSide ? Self.peripheral : Self.central, role: centralSide ? 0 : 1, controller: controller)
    capture.wait(5_000)
    central([0x02] + le16(247))
    peripheral([0x03] + le16(247))
    // Services: GAP, heart rate, then the custom 128-bit one.
    central([0x10] + le16(0x0001) + le16(0xFFFF) + le16(0x2800))
    peripheral(
      [0x11, 6] + le16(0x0001) + le16(0x0007) + le16(0x1800)
        + (stackTraffic ? le16(0x0008) + le16(0x000F) + le16(0x1801) : [])
        + le16(0x0010) + le16(0x0016) + le16(0x180D))
    central([0x10] + le16(0x0017) + le16(0xFFFF) + le16(0x2800))
    peripheral([0x11, 20] + le16(0x0017) + le16(0xFFFF) + customService.bytes.reversed())
    central([0x10] + le16(0x0000) + le16(0xFFFF) + le16(0x2800))
    peripheral([0x01, 0x10] + le16(0x0000) + [0x0A])
    // Characteristics.
    if stackTraffic {
      // Service Changed (indicate, its CCCD at 0x000B), Client Supported Features.
      central([0x08] + le16(0x0008) + le16(0x000F) + le16(0x2803))
      peripheral(
        [0x09, 7] + le16(0x0009) + [0x20] + le16(0x000A) + le16(0x2A05) + le16(0x000C) + [0x0A] + le16(0x000D)
          + le16(0x2B29))
      central([0x04] + le16(0x000B) + le16(0x000B))
      peripheral([0x05, 1] + le16(0x000B) + le16(0x2902))
      central([0x12] + le16(0x000B) + [0x02, 0x00])
      peripheral([0x13])
      central([0x12] + le16(0x000D) + [0x05])
      peripheral([0x13])
    }
    central([0x08] + le16(0x0010) + le16(0x0016) + le16(0x2803))
    peripheral(
      [0x09, 7] + le16(0x0011) + [0x10] + le16(0x0012) + le16(0x2A37) + le16(0x0014) + [0x02] + le16(0x0015)
        + le16(0x2A38))
    let write: BluetoothUUID = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
    let indicate: BluetoothUUID = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
    central([0x08] + le16(0x0017) + le16(0xFFFF) + le16(0x2803))
    peripheral(
      [0x09, 21] + le16(0x0018) + [0x0C] + le16(0x0019) + write.bytes.reversed() + le16(0x001A) + [0x20]
        + le16(0x001B) + indicate.bytes.reversed())
    // Descriptors.
    central([0x04] + le16(0x0013) + le16(0x0013))
    peripheral([0x05, 1] + le16(0x0013) + le16(0x2902))
    central([0x04] + le16(0x001C) + le16(0xFFFF))
    peripheral([0x05, 1] + le16(0x001C) + le16(0x2902) + le16(0x001D) + le16(0x2901))
    // Reads.
    central([0x0A] + le16(0x0015))
    peripheral([0x0B, 0x01])
    central([0x0A] + le16(0x001D))
    peripheral([0x0B] + Array("control".utf8))
    // Subscriptions: notifications of 2a37 first (the anchor), indications of the custom one.
    let subscribedAt = capture.time
    central([0x12] + le16(0x0013) + [0x01, 0x00])
    peripheral([0x13])
    central([0x12] + le16(0x001C) + [0x02, 0x00])
    peripheral([0x13])
    // Writes: accepted, refused, without response.
    central([0x12] + le16(0x0019) + [0x01])
    peripheral([0x13])
    central([0x12] + le16(0x0019) + [0xFF, 0x00])
    peripheral([0x01, 0x12] + le16(0x0019) + [0x80])
    central([0x52] + le16(0x0019) + [0x02])
    // Notifications 100 ms apart from 100 ms after the subscription, one long and in fragments.
    for n in 0..<10 {
      capture.time = subscribedAt + 100_000 * Int64(n + 1)
      let value = n == 5 ? longValue : [0x06, UInt8(60 + n)]
      capture.att(
        handle, [0x1B] + le16(0x0012) + value, fromPeripheral: true, centralSide: centralSide,
        fragment: n == 5 && fragmentLong ? 27 : nil, controller: controller)
    }
    capture.wait(1_000)
    peripheral([0x1D] + le16(0x001B) + [0x07])
    central([0x1E])
    if disconnect {
      capture.time = subscribedAt + 2_500_000
      capture.disconnected(handle, reason: 0x08, controller: controller)
    }
  }
}
