/// A signal that moves linearly from one value to another over a duration,
/// then holds the final value.
public struct RampSignal: SignalSource, Hashable {
  public var from: Double
  public var to: Double
  /// Seconds the ramp takes; zero jumps straight to `to`.
  public var duration: Double

  public init(from: Double, to: Double, duration: Double) {
    self.from = from
    self.to = to
    self.duration = max(0, duration)
  }

  public func value(at time: Double) -> Double? {
    guard duration > 0, time < duration else { return to }
    return from + (to - from) * max(0, time) / duration
  }
}
