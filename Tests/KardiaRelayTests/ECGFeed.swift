import BlendMicroClient
import Foundation
import Signals

/// What the Blend Micro client hands the relay for a synthetic ECG: each
/// sample as the board's text, decoded as the client decodes a notification,
/// timed on the board's schedule (sample n at n / rate).
enum ECGFeed {
  /// The date sample times count from in these tests: 2025-06-15T15:06:40Z.
  static let epoch = Date(timeIntervalSince1970: 1_750_000_000)

  static func readings(_ ecg: SyntheticECG, count: Int) -> [BlendMicroReading] {
    ecg.samples(0..<count).enumerated().map { n, value in
      BlendMicroClient.decode(Array(SyntheticECG.text(value).utf8), at: .seconds(Double(n) / ecg.sampleRate))
    }
  }

  /// The readings as the client's stream delivers them.
  static func stream(_ readings: [BlendMicroReading]) -> AsyncStream<BlendMicroReading> {
    let (stream, continuation) = AsyncStream<BlendMicroReading>.makeStream()
    for reading in readings { continuation.yield(reading) }
    continuation.finish()
    return stream
  }
}
