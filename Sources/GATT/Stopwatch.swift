/// Measures the time elapsed since it was made on any clock — virtual in the
/// loopback, wall time over BlueZ. Call it to read it.
///
/// ```swift
/// let elapsed = Stopwatch(host.clock)
/// …
/// let seconds = elapsed().seconds
/// ```
public struct Stopwatch: Sendable {
  private let read: @Sendable () -> Duration

  public init(_ clock: any Clock<Duration>) {
    read = Self.reader(clock)
  }

  private static func reader<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
  }

  /// The time since the stopwatch was made.
  public var elapsed: Duration { read() }

  /// The time since the stopwatch was made.
  public func callAsFunction() -> Duration { read() }
}
