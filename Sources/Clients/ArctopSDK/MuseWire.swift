/// Decodes what a Muse sends, as muse-lsl and muse-js read it: big-endian
/// values after a 16-bit packet index; EEG as twelve 12-bit samples,
/// 0.48828125 µV a step around code 2048.
public enum MuseWire {
  /// Why a notification could not be decoded.
  public struct MalformedPacket: Error, Hashable, Sendable, CustomStringConvertible {
    public var what: String
    public var length: Int
    public var description: String { "\(what): \(length) bytes, expected 20" }
  }

  /// An EEG packet: its index and twelve samples in µV.
  public static func eeg(_ bytes: [UInt8]) throws(MalformedPacket) -> (index: UInt16, microvolts: [Double]) {
    var samples: [Double] = []
    let index = try eeg(bytes, into: &samples)
    return (index, samples)
  }

  /// An EEG packet's twelve samples in µV, written over `samples` (which
  /// becomes 12 long, in place when nothing else holds it: a reader that
  /// keeps one array per channel allocates none per packet); returns the
  /// packet's index. `samples` is left as it was when the packet is malformed.
  public static func eeg(_ bytes: [UInt8], into samples: inout [Double]) throws(MalformedPacket) -> UInt16 {
    guard bytes.count == 20 else { throw MalformedPacket(what: "EEG packet", length: bytes.count) }
    if samples.count != 12 { samples = [Double](repeating: 0, count: 12) }
    samples.withUnsafeMutableBufferPointer { out in
      var at = 0
      for offset in stride(from: 2, to: 20, by: 3) {
        let (a, b, c) = (UInt16(bytes[offset]), UInt16(bytes[offset + 1]), UInt16(bytes[offset + 2]))
        out[at] = microvolts(a << 4 | b >> 4)
        out[at + 1] = microvolts((b & 0x0F) << 8 | c)
        at += 2
      }
    }
    return uint16(bytes, 0)
  }

  /// The µV a 12-bit code stands for.
  public static func microvolts(_ code: UInt16) -> Double { 0.48828125 * (Double(code) - 2048) }

  /// An accelerometer packet: its index and three x/y/z samples in g.
  public static func acceleration(_ bytes: [UInt8]) throws(MalformedPacket)
    -> (index: UInt16, samples: [(x: Double, y: Double, z: Double)])
  {
    var samples: [(x: Double, y: Double, z: Double)] = []
    samples.reserveCapacity(3)
    let index = try acceleration(bytes) { samples.append($0) }
    return (index, samples)
  }

  /// An accelerometer packet's three x/y/z samples in g, handed to `body` in
  /// order (no array made); returns the packet's index. `body` is not
  /// called for a malformed packet.
  public static func acceleration(
    _ bytes: [UInt8], each body: ((x: Double, y: Double, z: Double)) -> Void
  ) throws(MalformedPacket) -> UInt16 {
    guard bytes.count == 20 else { throw MalformedPacket(what: "accelerometer packet", length: bytes.count) }
    let scale = 0.0000610352
    for at in stride(from: 2, to: 20, by: 6) {
      body(
        (
          x: scale * Double(Int16(bitPattern: uint16(bytes, at))),
          y: scale * Double(Int16(bitPattern: uint16(bytes, at + 2))),
          z: scale * Double(Int16(bitPattern: uint16(bytes, at + 4)))
        ))
    }
    return uint16(bytes, 0)
  }

  /// A telemetry packet: the battery in percent.
  public static func batteryPercent(_ bytes: [UInt8]) throws(MalformedPacket) -> Double {
    guard bytes.count >= 10 else { throw MalformedPacket(what: "telemetry packet", length: bytes.count) }
    return Double(uint16(bytes, 2)) / 512
  }

  /// The characters of one control notification (its first byte counts them).
  public static func controlText(_ bytes: [UInt8]) throws(MalformedPacket) -> String {
    guard let count = bytes.first, Int(count) < bytes.count else {
      throw MalformedPacket(what: "control answer", length: bytes.count)
    }
    return String(decoding: bytes[1..<(1 + Int(count))], as: UTF8.self)
  }

  /// A command as the headband takes it: a byte counting what follows, the text, a newline.
  public static func command(_ text: String) -> [UInt8] {
    let body = Array(text.utf8) + [0x0A]
    return [UInt8(body.count)] + body
  }

  private static func uint16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]) }
}
