import GATT

/// Decodes the E4 profile's notifications (Peripherals/E4/README.md) into
/// values and sample positions; `nil` for a packet of the wrong shape.
public enum E4PacketDecoder {
  /// BVP: the session index of the first sample, and the values (1/16
  /// units): eight, or fewer in the last packet of a recording.
  public static func bvp(_ bytes: [UInt8]) -> (firstIndex: Int, values: [Double])? {
    guard (6...20).contains(bytes.count), bytes.count % 2 == 0 else { return nil }
    var reader = ByteReader(bytes)
    guard let first = reader.uint32() else { return nil }
    var values: [Double] = []
    values.reserveCapacity(reader.remaining / 2)
    while let value = reader.int16() { values.append(Double(value) / 16) }
    return (Int(first), values)
  }

  /// Acceleration: the packet counter and the x, y, z triplets (1/64 g):
  /// six, or fewer in the last packet of a recording.
  public static func acceleration(_ bytes: [UInt8]) -> (counter: UInt16, samples: [(x: Int8, y: Int8, z: Int8)])? {
    guard (5...20).contains(bytes.count), (bytes.count - 2) % 3 == 0 else { return nil }
    let end = bytes.count - 2
    let samples = stride(from: 0, to: end, by: 3).map {
      (x: Int8(bitPattern: bytes[$0]), y: Int8(bitPattern: bytes[$0 + 1]), z: Int8(bitPattern: bytes[$0 + 2]))
    }
    guard let counter = ByteReader.uint16(in: bytes, at: end) else { return nil }
    return (counter, samples)
  }

  /// GSR (EDA): the packet counter and six values (fewer in the last packet
  /// of a recording) in µS: 10⁶ / the 24-bit big-endian raw value; raw 0 is 0 µS.
  public static func gsr(_ bytes: [UInt8]) -> (counter: UInt16, values: [Double])? {
    guard (5...20).contains(bytes.count), (bytes.count - 2) % 3 == 0 else { return nil }
    let end = bytes.count - 2
    var reader = ByteReader(bytes)
    var values: [Double] = []
    while reader.offset < end, let raw = reader.uint24BigEndian() {
      values.append(raw == 0 ? 0 : 1_000_000 / Double(raw))
    }
    guard let counter = reader.uint16() else { return nil }
    return (counter, values)
  }

  /// Temperature: the packet counter and four values (fewer in the last
  /// packet of a recording) in °C: raw × 0.02 − 275.54.
  public static func temperature(_ bytes: [UInt8]) -> (counter: UInt16, values: [Double])? {
    guard (6...12).contains(bytes.count), bytes.count % 2 == 0 else { return nil }
    let end = bytes.count - 4
    var reader = ByteReader(bytes)
    var values: [Double] = []
    while reader.offset < end, let raw = reader.uint16() { values.append(Double(raw) * 0.02 - 275.54) }
    guard let counter = reader.uint16() else { return nil }
    return (counter, values)
  }

  /// IBI: the beat's BVP sample index in the session and the interval in seconds (1/64 s steps).
  public static func interbeatInterval(_ bytes: [UInt8]) -> (beatIndex: Int, interval: Double)? {
    guard bytes.count == 6 else { return nil }
    var reader = ByteReader(bytes)
    guard let index = reader.uint32(), let interval = reader.uint16() else { return nil }
    return (Int(index), Double(interval) / 64)
  }

  /// Battery: the level 0…1 (whole percent) and the device's Unix time of the reading.
  public static func battery(_ bytes: [UInt8]) -> (level: Double, timestamp: Double)? {
    guard bytes.count == 9, bytes[0] <= 100 else { return nil }
    var reader = ByteReader(bytes, at: 1)
    guard let time = reader.float64() else { return nil }
    return (Double(bytes[0]) / 100, time)
  }

  /// A control event from the wristband.
  public enum ControlEvent: Hashable, Sendable {
    /// The button was pressed at this Unix time.
    case tag(Double)
    /// The battery is empty; the wristband switches off.
    case poweringOff(Double)
  }

  /// Control: a tag or a power-off announcement; `nil` for unknown events.
  public static func control(_ bytes: [UInt8]) -> ControlEvent? {
    guard bytes.count == 9 else { return nil }
    var reader = ByteReader(bytes, at: 1)
    guard let time = reader.float64() else { return nil }
    switch bytes[0] {
    case 0x01: return .tag(time)
    case 0x02: return .poweringOff(time)
    default: return nil
    }
  }
}
