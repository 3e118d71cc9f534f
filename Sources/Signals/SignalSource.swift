/// A scalar signal a device samples at non-decreasing times: an ECG lead, one
/// axis of an accelerometer, a skin temperature.
///
/// Sources are values: a device keeps its own copy and advances it. The same
/// source sampled at the same times gives the same values, whichever clock
/// drives the device, so a run in virtual time and a run in wall time send
/// identical data.
public protocol SignalSource: Sendable {
  /// The value `time` seconds after the stream started, or `nil` once the
  /// signal has ended (a recording ran out). Callers pass non-decreasing times.
  mutating func value(at time: Double) -> Double?
}
