/// Decodes the E4 profile's notifications (Peripherals/E4/README.md) into
/// values and sample positions; `nil` for a packet of the wrong shape.
public enum E4PacketDecoder {
  /// BVP: the session index of the first sample, and the values (1/16
  /// units): eight, or fewer in the last packet of a recording.
  public static func bvp(_ bytes: [UInt8]) -> (firstIndex: Int, values: [Double])? {
    guard (6...20).contains(bytes.count), bytes.count % 2 == 0 else { return nil }
    let first = Int(uint32(bytes, at: 0))
    let values = stride(from: 4, to: bytes.count, by: 2).map {
      Double(Int16(bitPattern: uint16(bytes, at: $0))) / 16
    }
    return (first, values)
  }

  /// Acceleration: the packet counter and the x, y, z triplets (1/64 g):
  /// six, or fewer in the last packet of a recording.
  public static func acceleration(_ bytes: [UInt8]) -> (counter: UInt16, samples: [(x: Int8, y: Int8, z: Int8)])? {
    guard (5...20).contains(bytes.count), (bytes.count - 2) % 3 == 0 else { return nil }
    let end = bytes.count - 2
    let samples = stride(from: 0, to: end, by: 3).map {
      (x: Int8(bitPattern: bytes[$0]), y: Int8(bitPattern: bytes[$0 + 1]), z: Int8(bitPattern: bytes[$0 + 2]))
    }
    return (uint16(bytes, at: end), samples)
  }

  /// GSR (EDA): the packet counter and six values (fewer in the last packet
  /// of a recording) in µS: 10⁶ / the 24-bit big-endian raw value; raw 0 is 0 µS.
  public static func gsr(_ bytes: [UInt8]) -> (counter: UInt16, values: [Double])? {
    guard (5...20).contains(bytes.count), (bytes.count - 2) % 3 == 0 else { return nil }
    let end = bytes.count - 2
    let values = stride(from: 0, to: end, by: 3).map { offset -> Double in
      let raw = UInt32(bytes[offset]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2])
      return raw == 0 ? 0 : 1_000_000 / Double(raw)
    }
    return (uint16(bytes, at: end), values)
  }

  /// Temperature: the packet counter and four values (fewer in the last
  /// packet of a recording) in °C: raw × 0.02 − 275.54.
  public static func temperature(_ bytes: [UInt8]) -> (counter: UInt16, values: [Double])? {
    guard (6...12).contains(bytes.count), bytes.count % 2 == 0 else { return nil }
    let end = bytes.count - 4
    let values = stride(from: 0, to: end, by: 2).map { Double(uint16(bytes, at: $0)) * 0.02 - 275.54 }
    return (uint16(bytes, at: end), values)
  }

  /// IBI: the beat's BVP sample index in the session and the interval in seconds (1/64 s steps).
  public static func interbeatInterval(_ bytes: [UInt8]) -> (beatIndex: Int, interval: Double)? {
    guard bytes.count == 6 else { return nil }
    return (Int(uint32(bytes, at: 0)), Double(uint16(bytes, at: 4)) / 64)
  }

  /// Battery: the level 0…1 (whole percent) and the device's Unix time of the reading.
  public static func battery(_ bytes: [UInt8]) -> (level: Double, timestamp: Double)? {
    guard bytes.count == 9, bytes[0] <= 100 else { return nil }
    return (Double(bytes[0]) / 100, float64(bytes, at: 1))
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
    let time = float64(bytes, at: 1)
    switch bytes[0] {
    case 0x01: return .tag(time)
    case 0x02: return .poweringOff(time)
    default: return nil
    }
  }

  static func uint16(_ bytes: [UInt8], at offset: Int) -> UInt16 {
    UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
  }

  static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << ($1 * 8) }
  }

  static func float64(_ bytes: [UInt8], at offset: Int) -> Double {
    Double(bitPattern: (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << ($1 * 8) })
  }
}
