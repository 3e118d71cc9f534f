/// A clock that suspends a task on the executor it runs on, without a switch
/// of executor on the way in or out: the loopback's virtual clock. A device
/// model's periodic loop on such a clock costs one resumption per tick;
/// `DeviceTimeline` uses it when the host's clock is one.
public protocol InPlaceSleepingClock: Clock where Duration == Swift.Duration {
  /// Suspends until `deadline`, as `sleep(until:tolerance:)` does, on the caller's executor.
  nonisolated(nonsending) func sleepInPlace(until deadline: Instant) async throws

  /// Calls `tick` at `origin + first` and then at `origin` plus each time it
  /// returns, on the caller's executor, until it returns `nil` or the task is
  /// cancelled.
  nonisolated(nonsending) func repeatedly(
    after origin: Instant, from first: Duration, _ tick: nonisolated(nonsending) () async -> Duration?) async
}
