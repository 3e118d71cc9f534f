import Foundation
import GATT

/// A btsnoop capture read down to ATT: the peripherals in it, each with its
/// advertising data, its GATT database from the discovery responses, and its
/// connections with every notification, indication, write and subscription,
/// and how each ended.
///
/// Reading is strict: a record that is truncated, a length that lies, ACL
/// fragments that never complete are `CaptureError`s naming the record and
/// its byte offset, never skipped.
public struct Capture: Sendable {
  public var datalink: BTSnoopReader.Datalink
  /// The records read.
  public var records: Int
  /// Peripherals with ATT traffic first (most first), then those only seen advertising.
  public var peripherals: [CapturedPeripheral]

  /// Reads the capture at `path`.
  public static func read(path: String) throws(CaptureError) -> Capture {
    guard let data = FileManager.default.contents(atPath: path) else {
      let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
      throw CaptureError(.unreadable, "the capture \(path) \(reason)")
    }
    return try Capture(bytes: [UInt8](data))
  }

  /// Reads a capture held in memory.
  public init(bytes: [UInt8]) throws(CaptureError) {
    var reader = try BTSnoopReader(bytes)
    var walk = CaptureWalk()
    while let record = try reader.next() {
      try walk.add(try HCIPacket.decode(record, datalink: reader.datalink))
    }
    try walk.finish()
    datalink = reader.datalink
    records = walk.records
    peripherals = walk.peripherals()
  }

  /// The peripheral at `address`.
  public func peripheral(_ address: DeviceAddress) -> CapturedPeripheral? {
    peripherals.first { $0.address == address }
  }

  /// The peripherals with ATT traffic.
  public var talkingPeripherals: [CapturedPeripheral] { peripherals.filter { $0.attPDUs > 0 } }
}
