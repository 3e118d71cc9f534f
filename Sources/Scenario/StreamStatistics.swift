/// Running figures of one stream's samples: count, span, extremes and mean,
/// and an evenly thinned series of them for plots. Constant in size however
/// long the run, so a day-long scenario takes no more memory than a
/// minute-long one.
public struct StreamStatistics: Hashable, Sendable {
  /// One sample of the thinned series: seconds from the start, value.
  public struct Point: Hashable, Sendable {
    public var time: Double
    public var value: Double
  }

  /// Every `seriesStride`-th sample, at most `seriesCapacity` of them: when
  /// the series is full, every other point goes and the stride doubles.
  public private(set) var series: [Point] = []
  public private(set) var seriesStride = 1
  /// Samples until the next one the series keeps (a countdown: no division per sample).
  private var untilKept = 1
  /// The most points `series` keeps.
  public static let seriesCapacity = 2048

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
  /// Σ (tᵢ − t₀) and Σ i·(tᵢ − t₀) over the samples' indexes i from 0: with
  /// the count, all a least-squares line through the times needs.
  private var sumOfTimes = 0.0
  private var sumOfIndexedTimes = 0.0

  public init() {}

  public mutating func add(_ value: Double, at time: Double) {
    count += 1
    let start = firstTime ?? time
    firstTime = start
    if let lastTime { largestInterval = max(largestInterval ?? 0, time - lastTime) }
    lastTime = time
    let elapsed = time - start
    sumOfTimes += elapsed
    sumOfIndexedTimes += Double(count - 1) * elapsed
    minimum = min(minimum, value)
    maximum = max(maximum, value)
    sum += value
    untilKept -= 1
    if untilKept == 0 { keep(Point(time: time, value: value)) }
  }

  /// Adds `values`, `values[i]` at `time(i)`, as `add(_:at:)` each in turn
  /// (one access to the statistics for a packet's worth).
  public mutating func add(_ values: [Double], at time: (Int) -> Double) {
    for (i, value) in values.enumerated() { add(value, at: time(i)) }
  }

  private mutating func keep(_ point: Point) {
    untilKept = seriesStride
    if series.count == Self.seriesCapacity {
      series = stride(from: 0, to: series.count, by: 2).map { series[$0] }
      seriesStride *= 2
      // Samples 0, 2s, 4s… stay: this one (at index count − 1) only if the new stride takes it.
      untilKept = seriesStride - (count - 1) % seriesStride
      guard (count - 1) % seriesStride == 0 else { return }
      untilKept = seriesStride
    }
    series.append(point)
  }

  public var mean: Double? { count > 0 ? sum / Double(count) : nil }

  /// Samples per second: the inverse of the slope of the least-squares line
  /// through the samples' times (the device's time stamps when the client has
  /// them, else arrival times) against their indexes. Every sample weighs in,
  /// so a late first sample, or a backlog that drains at the end of a loaded
  /// run, moves it little, where the first and last samples alone would move
  /// it by their whole delay; a device that sends slower moves it all the
  /// same. With two samples it is the first and last samples' rate.
  public var rate: Double? {
    guard count > 1 else { return nil }
    let n = Double(count)
    // Σ i and n·Σ i² − (Σ i)² for i = 0…n−1, in closed form.
    let sumOfIndexes = n * (n - 1) / 2
    let spreadOfIndexes = n * n * (n * n - 1) / 12
    let secondsPerSample = (n * sumOfIndexedTimes - sumOfIndexes * sumOfTimes) / spreadOfIndexes
    guard secondsPerSample > 0 else { return nil }
    return 1 / secondsPerSample
  }
}
