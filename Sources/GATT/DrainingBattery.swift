/// A battery whose level (0…1) falls at a rate that depends on what the
/// device is doing: the level when the rate last changed, and when that was.
/// A model settles it (`settle(at:perHour:)`) whenever its rate is about to
/// change, and reads it in between with `level(at:perHour:)`.
public struct DrainingBattery: Sendable {
  /// The level at `since`.
  public var level: Double
  /// When `level` was last settled, on the device's timeline.
  public var since: Duration

  /// A battery at `level`, settled at the start of the timeline.
  public init(level: Double) {
    self.level = level
    since = .zero
  }

  /// The level at `now`, drained at `rate` (of a full battery per hour) since `since`.
  public func level(at now: Duration, perHour rate: Double) -> Double {
    max(0, level - rate * (now - since).seconds / 3600)
  }

  /// Applies the drain up to `now` at `rate`, the rate of the state the device was in.
  public mutating func settle(at now: Duration, perHour rate: Double) {
    level = level(at: now, perHour: rate)
    since = now
  }
}
