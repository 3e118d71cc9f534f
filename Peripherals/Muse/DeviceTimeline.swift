/// Time on the host's clock, measured from when hosting started, whatever
/// the clock's instant type: what the headband reads and sleeps on.
struct DeviceTimeline: Sendable {
  /// Time since hosting started.
  let elapsed: @Sendable () -> Duration
  /// Sleeps until `elapsed` reaches the given time; throws when cancelled.
  let sleep: @Sendable (Duration) async throws -> Void

  init<C: Clock<Duration>>(clock: C) {
    let start = clock.now
    elapsed = { start.duration(to: clock.now) }
    sleep = { deadline in try await clock.sleep(until: start.advanced(by: deadline), tolerance: nil) }
  }

  init(_ clock: any Clock<Duration>) {
    self.init(clock: clock)
  }
}

extension Duration {
  /// The duration in whole nanoseconds (rounded down).
  var nanoseconds: Int64 {
    let (seconds, attoseconds) = components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }
}
