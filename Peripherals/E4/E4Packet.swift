import GATT

/// The byte layouts of the E4 emulation profile (see README.md): how samples
/// are quantised and packed into notifications.
///
/// EDA, temperature and acceleration follow the public reverse engineering;
/// BVP, IBI, battery and control events are this project's own layouts.
public enum E4Packet {
  /// BVP samples per notification.
  public static let bvpSamples = 8
  /// Acceleration samples (x, y, z triplets) per notification.
  public static let accelerationSamples = 6
  /// EDA samples per notification.
  public static let edaSamples = 6
  /// Temperature samples per notification.
  public static let temperatureSamples = 4
  /// BVP is sent in units of 1/16.
  public static let bvpScale = 16.0
  /// Temperature: °C = raw × 0.02 − 275.54 (the reverse engineering's
  /// 0.02 K steps, −276.0 offset and +0.46 calibration).
  public static let temperatureStep = 0.02
  public static let temperatureOffset = 275.54

  /// Control event: a button press (tag).
  public static let tagEvent: UInt8 = 0x01
  /// Control event: the battery is empty and the device is switching off.
  public static let powerOffEvent: UInt8 = 0x02
  /// Command: start streaming (`0x01`, uint32 LE Unix seconds, optionally uint16 LE milliseconds).
  public static let startCommand: UInt8 = 0x01
  /// Command: stop streaming (`0x02`); this project's own.
  public static let stopCommand: UInt8 = 0x02

  /// A BVP value as sent: 1/16 units in an int16, saturating.
  public static func bvpCode(_ value: Double) -> Int16 {
    let scaled = (value * bvpScale).rounded()
    guard scaled.isFinite else { return scaled > 0 ? .max : (scaled < 0 ? .min : 0) }
    return Int16(max(Double(Int16.min), min(Double(Int16.max), scaled)))
  }

  /// An acceleration in g as sent: 1/64 g in an int8, saturating at −128…127.
  public static func accelerationCode(_ g: Double) -> Int8 {
    let scaled = (g * 64).rounded()
    guard !scaled.isNaN else { return 0 }
    return Int8(max(-128, min(127, scaled)))
  }

  /// A skin conductance in µS as sent: the 24-bit raw value 10⁶ / µS (skin
  /// resistance in Ω), 0 for conductances too small to carry.
  public static func edaCode(_ microsiemens: Double) -> UInt32 {
    guard microsiemens.isFinite, microsiemens > 0 else { return 0 }
    let raw = (1_000_000 / microsiemens).rounded()
    guard raw <= Double(0xFF_FFFF) else { return 0 }
    return UInt32(max(1, raw))
  }

  /// A temperature in °C as sent: uint16 in 0.02 K steps from −275.54 °C, saturating.
  public static func temperatureCode(_ celsius: Double) -> UInt16 {
    let raw = ((celsius + temperatureOffset) / temperatureStep).rounded()
    guard !raw.isNaN else { return 0 }
    return UInt16(max(0, min(65535, raw)))
  }

  /// A battery level 0…1 as sent: whole percent, rounded up so that 0 %
  /// means empty.
  public static func batteryPercent(_ level: Double) -> UInt8 {
    UInt8(max(0, min(100, (level * 100 - 1e-9).rounded(.up))))
  }

  /// BVP notification: uint32 LE index of the first sample in the session, then int16 LE samples.
  public static func bvp(firstIndex: UInt32, codes: [Int16]) -> [UInt8] {
    var bytes = ByteWriter.littleEndian(firstIndex)
    for code in codes { bytes += ByteWriter.littleEndian(UInt16(bitPattern: code)) }
    return bytes
  }

  /// Acceleration notification: int8 x, y, z triplets, then a uint16 LE packet counter.
  public static func acceleration(_ samples: [(x: Int8, y: Int8, z: Int8)], counter: UInt16) -> [UInt8] {
    var bytes: [UInt8] = []
    for sample in samples {
      bytes += [UInt8(bitPattern: sample.x), UInt8(bitPattern: sample.y), UInt8(bitPattern: sample.z)]
    }
    return bytes + ByteWriter.littleEndian(counter)
  }

  /// EDA notification: 24-bit big-endian raw values, then a uint16 LE packet counter.
  public static func eda(_ codes: [UInt32], counter: UInt16) -> [UInt8] {
    var bytes: [UInt8] = []
    for code in codes { bytes += [UInt8(code >> 16 & 0xFF), UInt8(code >> 8 & 0xFF), UInt8(code & 0xFF)] }
    return bytes + ByteWriter.littleEndian(counter)
  }

  /// Temperature notification: uint16 LE raw values, a uint16 LE packet counter, two zero bytes.
  public static func temperature(_ codes: [UInt16], counter: UInt16) -> [UInt8] {
    var bytes: [UInt8] = []
    for code in codes { bytes += ByteWriter.littleEndian(code) }
    return bytes + ByteWriter.littleEndian(counter) + [0, 0]
  }

  /// IBI notification: uint32 LE BVP sample index of the beat, uint16 LE interval in BVP samples (1/64 s).
  public static func interbeatInterval(beatIndex: UInt32, samples: UInt16) -> [UInt8] {
    ByteWriter.littleEndian(beatIndex) + ByteWriter.littleEndian(samples)
  }

  /// Battery value: uint8 percent, float64 LE Unix time of the reading.
  public static func battery(percent: UInt8, time: Double) -> [UInt8] {
    [percent] + ByteWriter.littleEndian(time.bitPattern)
  }

  /// Control event: event code, float64 LE Unix time.
  public static func controlEvent(_ code: UInt8, time: Double) -> [UInt8] {
    [code] + ByteWriter.littleEndian(time.bitPattern)
  }

}
