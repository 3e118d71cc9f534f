/// Running figures of one stream's samples: count, span, extremes and mean.
/// Constant in size however long the run, so a day-long scenario takes no
/// more memory than a minute-long one.
public struct StreamStatistics: Hashable, Sendable {
  public private(set) var count = 0
  /// Seconds from the start of the run to the first and last samples.
  public private(set) var firstTime: Double?
  public private(set) var lastTime: Double?
  public private(set) var minimum = Double.infinity
  public private(set) var maximum = -Double.infinity
  /// The longest time between two consecutive samples, in seconds (nil
  /// before the second sample). With the device's time stamps, a lost packet
  /// shows here as a gap of a packet's worth of samples.
  public private(set) var largestInterval: Double?
  private var sum = 0.0

  public init() {}

  public mutating func add(_ value: Double, at time: Double) {
    count += 1
    if firstTime == nil { firstTime = time }
    if let lastTime { largestInterval = max(largestInterval ?? 0, time - lastTime) }
    lastTime = time
    minimum = min(minimum, value)
    maximum = max(maximum, value)
    sum += value
  }

  public var mean: Double? { count > 0 ? sum / Double(count) : nil }

  /// Samples per second between the first and the last sample (the device's
  /// time stamps when the client has them, else arrival times).
  public var rate: Double? {
    guard count > 1, let firstTime, let lastTime, lastTime > firstTime else { return nil }
    return Double(count - 1) / (lastTime - firstTime)
  }
}
