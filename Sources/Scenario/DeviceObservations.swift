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
  /// Drawings of what the client's app shows (its screen, as SVG), by title:
  /// the last one given for each.
  public var drawings: [String: String] = [:]

  public init() {}
}
