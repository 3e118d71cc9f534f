/// What a client stack observed of one device during a run.
public struct DeviceObservations: Sendable {
  /// Seconds from the start of the run to the first connection.
  public var connectedAt: Double?
  public var streams: [String: StreamStatistics] = [:]
  /// How often each event was seen.
  public var events: [String: Int] = [:]
  /// The latest value of each derived figure.
  public var metrics: [String: Double] = [:]
  /// The errors the client reported, in order (the first 100).
  public var errors: [String] = []
  /// Errors beyond the first 100.
  public var moreErrors = 0

  public init() {}

  /// Adds samples of one or more streams; those without a time arrived `now`.
  mutating func add(_ batch: [(value: Double, stream: String, time: Double?)], now: Double) {
    for (value, stream, time) in batch {
      streams[stream, default: StreamStatistics()].add(value, at: time ?? now)
    }
  }
}
