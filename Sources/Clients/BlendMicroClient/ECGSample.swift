/// One ECG sample as the Kardia app saw it: the amplitude a notification
/// carried and when it arrived, relative to the start of the stream.
public struct ECGSample: Hashable, Sendable {
  /// Arrival time since the client started streaming.
  public var time: Duration
  /// The amplitude, in the units the board sends (mV).
  public var amplitude: Double
  /// The notification as the board sent it (UTF-8 text, a line end included
  /// if it sent one), when the sample came from one: what the Kardia app relayed.
  public var text: String?

  public init(time: Duration, amplitude: Double, text: String? = nil) {
    self.time = time
    self.amplitude = amplitude
    self.text = text
  }
}
