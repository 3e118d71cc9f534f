/// Time on the host's clock, measured from when hosting started, whatever
/// the clock's instant type: what a device model reads and sleeps on.
public struct DeviceTimeline: Sendable {
  /// Time since hosting started.
  public let elapsed: @Sendable () -> Duration
  /// Sleeps until `elapsed` reaches the given time; throws when cancelled.
  public let sleep: @Sendable (Duration) async throws -> Void

  /// A timeline that starts now on `clock`.
  public init<C: Clock<Duration>>(clock: C) {
    let start = clock.now
    elapsed = { start.duration(to: clock.now) }
    sleep = { deadline in try await clock.sleep(until: start.advanced(by: deadline), tolerance: nil) }
  }

  /// A timeline that starts now on the host's clock.
  public init(_ clock: any Clock<Duration>) {
    self.init(clock: clock)
  }

  /// Calls `tick` every `interval` from now, on this timeline, until the
  /// task is cancelled.
  public func every(_ interval: Duration, _ tick: () async -> Void) async {
    var next = elapsed()
    while !Task.isCancelled {
      next += interval
      do { try await sleep(next) } catch { return }
      await tick()
    }
  }
}
