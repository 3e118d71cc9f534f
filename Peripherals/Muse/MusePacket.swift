/// The Muse's notification layouts, as the public decoders (muse-lsl,
/// muse-js) read them: every value big-endian, every packet 20 bytes, a
/// 16-bit packet index first.
///
/// - EEG: the index, then 12 samples of 12 bits, packed two samples to three
///   bytes; a code `c` is 0.48828125 · (c − 2048) µV.
/// - Accelerometer and gyroscope: the index, then 3 samples of x, y, z as
///   signed 16-bit codes (0.0000610352 g and 0.0074768 °/s a step).
/// - Telemetry: the index, battery (percent · 512), fuel gauge (mV / 2.2),
///   an ADC reading and a temperature, then zeros.
/// - PPG: the index, then 6 samples of 24 bits.
/// - Control answers: one byte giving the count of characters that follow
///   (at most 19), the characters, zeros to 20 bytes.
public enum MusePacket {
  /// Every notification the headband sends is this long.
  public static let length = 20
  /// EEG samples per packet.
  public static let eegSamplesPerPacket = 12
  /// Microvolts per EEG code step (12 bits over a 2 mV span).
  public static let microvoltsPerCode = 0.48828125
  /// Accelerometer g per code step.
  public static let gPerCode = 0.0000610352
  /// Gyroscope degrees per second per code step.
  public static let degreesPerSecondPerCode = 0.0074768
  /// Characters of a control answer per notification.
  public static let controlCharactersPerPacket = 19

  /// The 12-bit code of `microvolts`, rounded (halves away from zero) and
  /// held to 0…4095 (the rails).
  ///
  /// Without `rounded()`, a call into the C library, and without a branch
  /// on the fraction, either way as likely for noise: adding a half away
  /// from zero then truncating is exact for every value of the range but
  /// the one just under a half (0.49999999999999994), which the sum rounds
  /// up to 1.
  public static func eegCode(_ microvolts: Double) -> UInt16 {
    let steps = microvolts / microvoltsPerCode
    // Beyond the rails (and ±∞); NaN fails both tests and reads as the low rail.
    guard steps > -2049, steps < 2048 else { return steps > 0 ? 4095 : 0 }
    let half = steps < 0 ? -0.5 : 0.5
    let rounded = steps.magnitude < 0.5 ? 0 : Int(steps + half)
    return UInt16(truncatingIfNeeded: min(4095, max(0, rounded + 2048)))
  }

  /// The microvolts a code stands for.
  public static func microvolts(code: UInt16) -> Double {
    microvoltsPerCode * (Double(code) - 2048)
  }

  /// One EEG channel's packet: `index` and twelve 12-bit codes.
  public static func eeg(index: UInt16, codes: some RandomAccessCollection<UInt16>) -> [UInt8] {
    var packet = [UInt8](repeating: 0, count: length)
    eeg(index: index, codes: codes, into: &packet)
    return packet
  }

  /// Writes one EEG channel's packet into `packet`, which becomes 20 bytes.
  /// Its storage is written in place when nothing else holds it: a sender
  /// that keeps one array per channel, and whose receivers let go of each
  /// packet once read, allocates none per packet (one that keeps it gets
  /// its own copy first, as ever with an array).
  public static func eeg(index: UInt16, codes: some RandomAccessCollection<UInt16>, into packet: inout [UInt8]) {
    precondition(codes.count == eegSamplesPerPacket, "an EEG packet holds 12 samples")
    if packet.count != length { packet = [UInt8](repeating: 0, count: length) }
    packet.withUnsafeMutableBufferPointer { bytes in
      bytes[0] = UInt8(index >> 8)
      bytes[1] = UInt8(index & 0xFF)
      var at = 2
      var next = codes.makeIterator()
      while let first = next.next(), let second = next.next() {
        let (a, b) = (first & 0x0FFF, second & 0x0FFF)
        bytes[at] = UInt8(a >> 4)
        bytes[at + 1] = UInt8((a & 0x0F) << 4 | b >> 8)
        bytes[at + 2] = UInt8(b & 0xFF)
        at += 3
      }
    }
  }

  /// The signed code of an acceleration in g, held to the 16-bit range.
  public static func accelerationCode(_ g: Double) -> Int16 { int16(g / gPerCode) }
  /// The signed code of an angular rate in °/s, held to the 16-bit range.
  public static func gyroCode(_ degreesPerSecond: Double) -> Int16 { int16(degreesPerSecond / degreesPerSecondPerCode) }

  /// An accelerometer or gyroscope packet: `index` and three x/y/z samples.
  public static func imu(index: UInt16, samples: [(x: Int16, y: Int16, z: Int16)]) -> [UInt8] {
    var packet = [UInt8](repeating: 0, count: length)
    imu(index: index, samples: samples, into: &packet)
    return packet
  }

  /// Writes an accelerometer or gyroscope packet into `packet`, which
  /// becomes 20 bytes: in place when nothing else holds it, as
  /// ``eeg(index:codes:into:)`` does.
  public static func imu(
    index: UInt16, samples: some Collection<(x: Int16, y: Int16, z: Int16)>, into packet: inout [UInt8]
  ) {
    precondition(samples.count == 3, "an IMU packet holds 3 samples")
    if packet.count != length { packet = [UInt8](repeating: 0, count: length) }
    packet.withUnsafeMutableBufferPointer { bytes in
      var at = 0
      func put(_ value: UInt16) {
        bytes[at] = UInt8(value >> 8)
        bytes[at + 1] = UInt8(value & 0xFF)
        at += 2
      }
      put(index)
      for sample in samples {
        put(UInt16(bitPattern: sample.x))
        put(UInt16(bitPattern: sample.y))
        put(UInt16(bitPattern: sample.z))
      }
    }
  }

  /// A telemetry packet: battery in percent, fuel gauge in millivolts, temperature code.
  public static func telemetry(index: UInt16, batteryPercent: Double, fuelGaugeMillivolts: Double, temperature: UInt16)
    -> [UInt8]
  {
    var bytes = bigEndian(index)
    bytes += bigEndian(UInt16(min(65535, max(0, (batteryPercent * 512).rounded()))))
    bytes += bigEndian(UInt16(min(65535, max(0, (fuelGaugeMillivolts / 2.2).rounded()))))
    bytes += bigEndian(UInt16(0))
    bytes += bigEndian(temperature)
    return bytes + [UInt8](repeating: 0, count: length - bytes.count)
  }

  /// A PPG packet: `index` and six 24-bit codes.
  public static func ppg(index: UInt16, codes: some Collection<UInt32>) -> [UInt8] {
    precondition(codes.count == 6, "a PPG packet holds 6 samples")
    // Written in place: building it from two- and three-byte arrays made nine a packet.
    return [UInt8](unsafeUninitializedCapacity: length) { bytes, count in
      bytes[0] = UInt8(index >> 8)
      bytes[1] = UInt8(index & 0xFF)
      var at = 2
      for code in codes {
        let clipped = min(code, 0xFF_FFFF)
        bytes[at] = UInt8(clipped >> 16)
        bytes[at + 1] = UInt8(clipped >> 8 & 0xFF)
        bytes[at + 2] = UInt8(clipped & 0xFF)
        at += 3
      }
      count = length
    }
  }

  /// A control answer cut into notifications of at most 19 characters each.
  public static func controlAnswer(_ text: String) -> [[UInt8]] {
    let characters = Array(text.utf8)
    return stride(from: 0, to: characters.count, by: controlCharactersPerPacket).map { start in
      let part = characters[start..<min(characters.count, start + controlCharactersPerPacket)]
      var packet = [UInt8(part.count)] + part
      packet += [UInt8](repeating: 0, count: length - packet.count)
      return packet
    }
  }

  private static func bigEndian(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

  private static func int16(_ value: Double) -> Int16 {
    guard value.isFinite else { return value > 0 ? .max : .min }
    return Int16(min(Double(Int16.max), max(Double(Int16.min), value.rounded())))
  }
}
