/// The quality of each sensor over one analysis window, from its samples:
/// off (held at a rail, or flat), noisy, or good.
///
/// How quality is judged and written is this project's choice: the document
/// names `qaString` and `isHeadbandOn` but not their contents.
public struct SignalQuality: Hashable, Sendable {
  public enum Level: String, Hashable, Sendable {
    case good, noisy, off
  }

  /// One level per sensor, TP9, AF7, AF8, TP10.
  public var sensors: [Level]

  public init(sensors: [Level]) { self.sensors = sensors }

  /// Judges each sensor's window of µV samples: off when every sample sits
  /// within 5 µV of a rail (±1000 µV) or the spread is under 0.5 µV; noisy
  /// when the standard deviation is over 100 µV; good otherwise.
  public init(windows: [[Double]]) {
    sensors = windows.map { samples in
      guard !samples.isEmpty else { return .off }
      if samples.allSatisfy({ abs($0) > 995 }) { return .off }
      let mean = samples.reduce(0, +) / Double(samples.count)
      let deviation = (samples.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(samples.count)).squareRoot()
      if deviation < 0.5 { return .off }
      return deviation > 100 ? .noisy : .good
    }
  }

  /// The headband is on when no sensor is off.
  public var headbandOn: Bool { !sensors.contains(.off) }

  /// `TP9:good,AF7:good,AF8:noisy,TP10:good`.
  public var qaString: String {
    zip(MuseProfile.sensorNames, sensors).map { "\($0):\($1.rawValue)" }.joined(separator: ",")
  }
}
