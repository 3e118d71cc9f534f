import Foundation
import GATT
import Glibc

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
  /// Peripherals with ATT traffic first, then those only seen advertising, each in order of first appearance.
  public var peripherals: [CapturedPeripheral]

  /// Reads the capture at `path`.
  public static func read(path: String) throws(CaptureError) -> Capture {
    try Capture(bytes: try contents(of: path))
  }

  /// The file's bytes, read straight into one array (a 100 MB capture takes 100 MB, not twice that).
  static func contents(of path: String) throws(CaptureError) -> [UInt8] {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else {
      let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
      throw CaptureError(.unreadable, "the capture \(path) \(reason)")
    }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw CaptureError(.unreadable, "the capture \(path) cannot be read") }
    let size = Int(status.st_size)
    var failed = false
    let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
      count = 0
      while count < size {
        let got = Glibc.read(descriptor, buffer.baseAddress! + count, size - count)
        if got <= 0 {
          failed = got < 0
          break
        }
        count += got
      }
    }
    if failed { throw CaptureError(.unreadable, "the capture \(path) cannot be read") }
    return bytes
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
