/// Time on the host's clock, measured from when hosting started, whatever
/// the clock's instant type: what a device model reads and sleeps on.
///
/// On a clock that sleeps in place (the loopback's), sleeping and
/// `repeatedly(from:_:)` stay on the caller's executor.
public struct DeviceTimeline: Sendable {
  /// A device model's periodic work: called at a time on the timeline, it
  /// returns when it is due next, or `nil` when it is over.
  public typealias Tick = nonisolated(nonsending) () async -> Duration?

  /// Time since hosting started.
  public let elapsed: @Sendable () -> Duration
  /// Sleeps until `elapsed` reaches the given time; throws when cancelled.
  public let sleep: nonisolated(nonsending) @Sendable (Duration) async throws -> Void
  private let repeating: nonisolated(nonsending) @Sendable (Duration, Tick) async -> Void

  /// A timeline that starts now on `clock`.
  public init<C: Clock<Duration>>(clock: C) {
    let start = clock.now
    elapsed = { start.duration(to: clock.now) }
    if let inPlace = clock as? any InPlaceSleepingClock {
      (sleep, repeating) = Self.inPlace(inPlace, from: start)
    } else {
      let sleep: nonisolated(nonsending) @Sendable (Duration) async throws -> Void = { deadline in
        try await clock.sleep(until: start.advanced(by: deadline), tolerance: nil)
      }
      self.sleep = sleep
      repeating = { first, tick in
        var deadline = first
        while !Task.isCancelled {
          do { try await sleep(deadline) } catch { return }
          guard let next = await tick() else { return }
          deadline = next
        }
      }
    }
  }

  /// The sleeps of a clock that sleeps in place; `start` is its instant (the
  /// same clock, seen through `Clock`).
  private static func inPlace<C: InPlaceSleepingClock, I: InstantProtocol>(_ clock: C, from start: I) -> (
    nonisolated(nonsending) @Sendable (Duration) async throws -> Void,
    nonisolated(nonsending) @Sendable (Duration, Tick) async -> Void
  ) {
    // `I` is `C.Instant`: the caller found `C` as the dynamic type of its clock.
    let start = start as! C.Instant
    return (
      { deadline in try await clock.sleepInPlace(until: start.advanced(by: deadline)) },
      { first, tick in await clock.repeatedly(after: start, from: first, tick) }
    )
  }

  /// A timeline that starts now on the host's clock.
  public init(_ clock: any Clock<Duration>) {
    self.init(clock: clock)
  }

  /// Calls `tick` at `first` (on this timeline) and then at each time it
  /// returns, until it returns `nil` or the task is cancelled.
  nonisolated(nonsending) public func repeatedly(from first: Duration, _ tick: Tick) async {
    await repeating(first, tick)
  }

  /// Calls `tick` every `interval` from now, on this timeline, until the
  /// task is cancelled.
  nonisolated(nonsending) public func every(_ interval: Duration, _ tick: () async -> Void) async {
    var next = elapsed() + interval
    await repeatedly(from: next) {
      await tick()
      next += interval
      return next
    }
  }
}
