/// One ECG sample as the Kardia app saw it: the amplitude a notification
/// carried and when it arrived, relative to the start of the stream.
public struct ECGSample: Hashable, Sendable {
  /// Arrival time since the client started streaming.
  public var time: Duration
  /// The amplitude, in the units the board sends (mV).
  public var amplitude: Double

  public init(time: Duration, amplitude: Double) {
    self.time = time
    self.amplitude = amplitude
  }
}
