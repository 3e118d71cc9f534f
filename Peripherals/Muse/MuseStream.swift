/// One of the headband's streams and its timing: how many samples a packet
/// carries and at what rate, so packet k is due once its last sample is
/// taken, `(k + 1) · perPacket / rate` seconds after streaming starts.
///
/// The raw value is the stream's place in `allCases` (0…4).
enum MuseStream: Int, CaseIterable, Hashable, Sendable {
  case eeg, accelerometer, gyroscope, ppg, telemetry

  /// Samples per second.
  var rate: Int64 {
    switch self {
    case .eeg: 256
    case .accelerometer, .gyroscope: 52
    case .ppg: 64
    case .telemetry: 1
    }
  }

  /// Samples per packet.
  var perPacket: Int64 {
    switch self {
    case .eeg: 12
    case .accelerometer, .gyroscope: 3
    case .ppg: 6
    case .telemetry: 1
    }
  }

  /// Packets due once `elapsed` nanoseconds of streaming have passed
  /// (telemetry: one at once, then one a second).
  func packetsDue(afterNanoseconds elapsed: Int64) -> Int {
    let filled = Int(elapsed * rate / (perPacket * 1_000_000_000))
    return self == .telemetry ? filled + 1 : filled
  }

  /// When packet `k` (0-based) is due, nanoseconds after streaming started.
  func deadline(ofPacket k: Int) -> Int64 {
    let filled = Int64(self == .telemetry ? k : k + 1)
    return (filled * perPacket * 1_000_000_000 + rate - 1) / rate
  }
}
