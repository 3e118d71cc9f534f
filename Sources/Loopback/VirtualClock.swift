import GATT
import Synchronization

/// A clock whose time moves only when told to, so device and client logic run
/// faster than real time and in a repeatable order.
///
/// Tasks sleep on it as on any `Clock`; `advance(by:)`, `advance(to:)` and
/// `runUntilIdle(upTo:)` move time forward and wake sleepers one at a time, in
/// deadline order (ties in the order they went to sleep). After each wake the
/// clock yields until the woken task has gone back to sleep on the clock and
/// the other ready tasks have had their turns, so the effects of one instant
/// happen before the next instant starts. A woken task that does not sleep on
/// the clock again (it ends, or waits for something else) is given
/// `settleLimit` of wall time before time moves on. A sleeping task that is
/// cancelled throws `CancellationError` at once and is removed.
///
/// Bound to a `LoopbackExecutor` (and with the tasks that sleep on it running
/// there), an instant has settled exactly when the executor has nothing left
/// to run and the woken task sleeps again: no counting of turns, and the same
/// order of events however loaded the machine is. Without one, the clock
/// yields until it has seen a few turns without activity.
///
/// Move time from one task at a time (the test's); any number of tasks may sleep.
public final class VirtualClock: InPlaceSleepingClock, Sendable {
  /// A point in virtual time: the time since the clock's origin.
  public struct Instant: InstantProtocol, CustomStringConvertible {
    /// Time since the clock's origin.
    public var offset: Duration

    public init(offset: Duration) {
      self.offset = offset
    }

    /// The clock's origin.
    public static let origin = Instant(offset: .zero)

    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    public func duration(to other: Instant) -> Duration {
      other.offset - offset
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }

    public var description: String { "t+\(offset)" }
  }

  private struct Sleeper {
    var id: UInt64
    var deadline: Instant
    /// Identifies the sleeping task (its hash), so `advance` can tell when it sleeps again.
    var task: Int?
    var continuation: UnsafeContinuation<Void, any Error>
  }

  private struct State {
    var now: Instant
    /// Sorted by deadline, then by id (the order they went to sleep).
    var sleepers: [Sleeper] = []
    var nextID: UInt64 = 0
    /// Sleeps that have started but not yet suspended (a handful at most:
    /// an array, searched from the end, costs less than hashing).
    var arriving: [UInt64] = []
    /// Arriving sleeps cancelled before they suspended.
    var cancelledArrivals: [UInt64] = []

    /// Removes `id` from `list`; whether it was there.
    static func remove(_ id: UInt64, from list: inout [UInt64]) -> Bool {
      guard let index = list.lastIndex(of: id) else { return false }
      list.remove(at: index)
      return true
    }
    /// Counts every sleeper added or removed, so `advance` can tell when the
    /// other tasks have settled.
    var activity: UInt64 = 0
    /// The task `advance` last woke, and whether it has gone to sleep again since.
    var wokenTask: Int?
    var wokenTaskSleepsAgain = true
    /// Sleeps begun off the clock's executor.
    var sleepsOffExecutor = 0
    /// Tasks in `holding(_:)`: time does not move while there are any.
    var holds = 0

    mutating func insert(_ sleeper: Sleeper) {
      if let task = sleeper.task, task == wokenTask {
        wokenTaskSleepsAgain = true
      }
      let index =
        sleepers.firstIndex {
          $0.deadline > sleeper.deadline || ($0.deadline == sleeper.deadline && $0.id > sleeper.id)
        } ?? sleepers.endIndex
      sleepers.insert(sleeper, at: index)
      activity &+= 1
    }
  }

  private let state: Mutex<State>

  /// Turns without clock activity that count as the other tasks having settled.
  private static let quietTurns = 8

  /// How long (wall time) `advance` waits for a woken task to sleep on the
  /// clock again before moving on without it.
  public let settleLimit: Duration

  /// The executor whose quiet tells that an instant has settled, if any.
  public let executor: LoopbackExecutor?

  /// A clock at `now` (the origin unless given).
  ///
  /// - Parameter settleLimit: How long (wall time) to wait for a woken task to
  ///   sleep again. A periodic task sleeps again within microseconds; only a
  ///   task that wakes and then ends or waits for something other than the
  ///   clock costs the whole limit. Raise it on a heavily loaded machine.
  ///   - executor: The executor the sleeping tasks run on; `advance` then
  ///     waits until it has nothing left to run instead of yielding.
  public init(
    now: Instant = .origin, settleLimit: Duration = .milliseconds(50), executor: LoopbackExecutor? = nil
  ) {
    state = Mutex(State(now: now))
    self.settleLimit = settleLimit
    self.executor = executor
  }

  /// The current virtual time.
  public var now: Instant { state.withLock { $0.now } }

  /// Virtual time has no granularity.
  public var minimumResolution: Duration { .zero }

  /// How many tasks are sleeping on the clock.
  public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

  /// The earliest deadline of a sleeping task.
  public var nextDeadline: Instant? { state.withLock { $0.sleepers.first?.deadline } }

  /// How many sleeps began on a thread other than the executor's (0 without
  /// an executor). A task that sleeps off the executor escaped the loopback's
  /// thread (say, `Task { }` without the executor preference), and the clock
  /// cannot tell when its work for an instant is done.
  public var sleepsOffExecutor: Int { state.withLock { $0.sleepsOffExecutor } }

  /// Suspends until the clock is advanced to `deadline`; returns at once if it
  /// is already there. `tolerance` is ignored.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try await sleepInPlace(until: deadline)
  }

  /// Suspends until the clock is advanced to `deadline`, as `sleep(until:tolerance:)`
  /// does, but on the caller's executor: no executor switch on the way in or out.
  nonisolated(nonsending) public func sleepInPlace(until deadline: Instant) async throws {
    try Task.checkCancellation()
    let id = arrive(as: nil)
    try await withTaskCancellationHandler {
      try await suspend(id, until: deadline)
    } onCancel: {
      cancelSleep(id)
    }
  }

  /// Calls `tick` at `origin + first` and then at `origin` plus each time it
  /// returns, on the caller's executor, until it returns `nil` or the task is
  /// cancelled: a device model's periodic loop, with one cancellation handler
  /// for all its sleeps instead of one each, and no switch of executor. A
  /// time already reached ticks again at once, without a suspension: a tick
  /// must move its time on.
  nonisolated(nonsending) public func repeatedly(
    after origin: Instant, from first: Duration, _ tick: nonisolated(nonsending) () async -> Duration?
  ) async {
    // The loop's latest sleep (0 before the first), written and read under the state's lock.
    let current = SleepInProgress()
    await withTaskCancellationHandler {
      let task = withUnsafeCurrentTask { $0?.hashValue }
      var deadline = origin.advanced(by: first)
      while true {
        let id = arrive(as: current)
        // Cancelled before this sleep registered: the handler has run or will find nothing.
        guard id != 0 else { return }
        // `suspend(_:until:)`, written out: each nested await costs a switch of executor.
        do {
          try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
            enter(id, until: deadline, task: task, continuation)
          }
        } catch { return }
        guard let next = await tick() else { return }
        deadline = origin.advanced(by: next)
      }
    } onCancel: {
      cancelSleep(in: current)
    }
  }

  /// Registers a sleep that is about to suspend and returns its id; with
  /// `current`, also records it there and returns 0 if the task is already
  /// cancelled (checked under the lock, so a cancellation handler reading
  /// `current` under it either sees this sleep or ran before the check).
  private func arrive(as current: SleepInProgress?) -> UInt64 {
    let offExecutor = executor.map { !$0.isCurrent } ?? false
    return state.withLock { state in
      if let current {
        guard !Task.isCancelled else { return 0 }
        current.id.store(state.nextID + 1, ordering: .relaxed)
      }
      if offExecutor { state.sleepsOffExecutor += 1 }
      state.nextID += 1
      state.arriving.append(state.nextID)
      return state.nextID
    }
  }

  /// Suspends the sleep `id` (registered by `arrive`) until `deadline`.
  nonisolated(nonsending) private func suspend(_ id: UInt64, until deadline: Instant) async throws {
    let task = withUnsafeCurrentTask { $0?.hashValue }
    try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
      enter(id, until: deadline, task: task, continuation)
    }
  }

  /// Puts the sleep `id` among the sleepers, or resumes it at once when its
  /// deadline has passed or it was cancelled while arriving.
  private func enter(
    _ id: UInt64, until deadline: Instant, task: Int?, _ continuation: UnsafeContinuation<Void, any Error>
  ) {
    let immediate: Result<Void, any Error>? = state.withLock { state in
      _ = State.remove(id, from: &state.arriving)
      if State.remove(id, from: &state.cancelledArrivals) { return .failure(CancellationError()) }
      if deadline <= state.now { return .success(()) }
      state.insert(Sleeper(id: id, deadline: deadline, task: task, continuation: continuation))
      return nil
    }
    if let immediate { continuation.resume(with: immediate) }
  }

  /// The latest sleep of a `repeatedly` loop (0 before the first).
  private final class SleepInProgress: Sendable {
    let id = Atomic<UInt64>(0)
  }

  /// Ends the latest sleep of a `repeatedly` loop, read under the lock that
  /// `arrive` records it under: either this sees the sleep `arrive`
  /// registered, or `arrive` ran after and sees the task cancelled.
  private func cancelSleep(in current: SleepInProgress) {
    let continuation = state.withLock { state in
      Self.removeSleep(current.id.load(ordering: .relaxed), from: &state)
    }
    continuation?.resume(throwing: CancellationError())
  }

  /// Ends the sleep `id` with `CancellationError`, whether it has suspended yet or not.
  private func cancelSleep(_ id: UInt64) {
    let continuation = state.withLock { Self.removeSleep(id, from: &$0) }
    continuation?.resume(throwing: CancellationError())
  }

  /// Takes the sleep `id` off the sleepers (its continuation, to resume
  /// outside the lock), or marks it cancelled if it has not suspended yet.
  private static func removeSleep(_ id: UInt64, from state: inout State) -> UnsafeContinuation<Void, any Error>? {
    if let index = state.sleepers.firstIndex(where: { $0.id == id }) {
      state.activity &+= 1
      return state.sleepers.remove(at: index).continuation
    }
    if state.arriving.contains(id) { state.cancelledArrivals.append(id) }
    return nil
  }

  /// Keeps time from moving on (on a clock with an executor) until `body`
  /// returns: for work that takes no scenario time but waits on something
  /// outside the executor, such as a server starting on threads of its own,
  /// which the executor's quiet cannot see. Time stands still at most
  /// `holdLimit` of wall time.
  public func holding<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
    state.withLock { $0.holds += 1 }
    defer { state.withLock { $0.holds -= 1 } }
    return try await body()
  }

  /// The longest (wall time) `holding(_:)` keeps time still.
  public static let holdLimit: Duration = .seconds(30)

  /// Moves time forward by `duration`, waking every sleeper whose deadline is reached.
  public func advance(by duration: Duration) async {
    await advance(to: now.advanced(by: duration))
  }

  /// Moves time forward to `target`, waking every sleeper whose deadline is at
  /// or before it, in deadline order; time stands at each deadline while its
  /// sleeper runs. Sleepers added meanwhile with deadlines up to `target` are
  /// woken too. Does nothing when `target` is in the past.
  public func advance(to target: Instant) async {
    await advance(to: target, stoppingWhen: { false })
  }

  /// Moves time forward to `target` as `advance(to:)` does, but stops as soon
  /// as `stop` returns true, checked once each instant has settled (and
  /// before the first); time then stands at that instant. `stop` runs on the
  /// executor's thread if the clock has one, and must not block.
  public func advance(to target: Instant, stoppingWhen stop: @escaping @Sendable () -> Bool) async {
    await settle()
    if stop() { return }
    if let executor {
      // The executor wakes the next sleeper itself each time it is quiet; the
      // slow path (a woken task that did not sleep again) comes back here.
      var wakes = await wakeWhileQuiet(on: executor, upTo: target, stoppingWhen: stop)
      while wakes == .unsettled {
        await settle(on: executor)
        if stop() { return }
        wakes = await wakeWhileQuiet(on: executor, upTo: target, stoppingWhen: stop)
      }
      if wakes == .stopped { return }
    } else {
      while let sleeper = popSleeper(notAfter: target) {
        sleeper.continuation.resume()
        await settle()
        if stop() { return }
      }
    }
    state.withLock { state in
      if state.now < target { state.now = target }
    }
  }

  private enum Wakes: UInt8, AtomicRepresentable {
    /// No sleeper is due by the target any more.
    case done
    /// `stop` said so.
    case stopped
    /// A woken task had not slept again when the executor was quiet: it waits
    /// for outside work, which the caller settles the slow way.
    case unsettled
  }

  /// Wakes the sleepers due by `target` one at a time, each once the executor
  /// is quiet after the one before, without leaving the executor's thread
  /// between them.
  private func wakeWhileQuiet(
    on executor: LoopbackExecutor, upTo target: Instant, stoppingWhen stop: @escaping @Sendable () -> Bool
  ) async -> Wakes {
    let outcome = Atomic<Wakes>(.done)
    await executor.whileQuiet { [self] in
      let settled = state.withLock { state in
        guard state.wokenTaskSleepsAgain, state.holds == 0 else { return false }
        state.wokenTask = nil
        return true
      }
      guard settled else {
        outcome.store(.unsettled, ordering: .relaxed)
        return false
      }
      if stop() {
        outcome.store(.stopped, ordering: .relaxed)
        return false
      }
      guard let woken = state.withLock({ Self.pop(&$0, notAfter: target) }) else { return false }
      woken.continuation.resume()
      return true
    }
    return outcome.load(ordering: .relaxed)
  }

  /// Advances from deadline to deadline until no task sleeps on the clock, or
  /// until `limit` of virtual time has passed (then time stands at the limit).
  /// Without a limit, a task that sleeps forever in a loop keeps this running.
  public func runUntilIdle(upTo limit: Duration? = nil) async {
    let end = limit.map { now.advanced(by: $0) }
    if executor != nil, let end {
      // The executor goes from deadline to deadline by itself.
      await advance(to: end)
      return
    }
    while true {
      await settle()
      guard let next = nextDeadline else { break }
      if let end, next > end {
        await advance(to: end)
        return
      }
      await advance(to: next)
    }
    if let end { await advance(to: end) }
  }

  private func popSleeper(notAfter target: Instant) -> Sleeper? {
    state.withLock { Self.pop(&$0, notAfter: target) }
  }

  private static func pop(_ state: inout State, notAfter target: Instant) -> Sleeper? {
    guard let first = state.sleepers.first, first.deadline <= target else { return nil }
    state.sleepers.removeFirst()
    state.activity &+= 1
    state.wokenTask = first.task
    state.wokenTaskSleepsAgain = first.task == nil
    if state.now < first.deadline { state.now = first.deadline }
    return first
  }

  /// Yields until the task just woken (if any) has gone to sleep on the clock
  /// again, or `settleLimit` has passed, and the clock has then been quiet for
  /// a few turns, so that the other ready tasks have run too.
  private func settle() async {
    if let executor {
      await settle(on: executor)
      return
    }
    let start = ContinuousClock.now
    var last = state.withLock { $0.activity }
    var quiet = 0
    while true {
      await Task.yield()
      let (current, sleepsAgain) = state.withLock { ($0.activity, $0.wokenTaskSleepsAgain) }
      if current != last {
        last = current
        quiet = 0
      } else {
        quiet += 1
      }
      if quiet >= Self.quietTurns && (sleepsAgain || ContinuousClock.now - start >= settleLimit) {
        state.withLock { state in
          state.wokenTask = nil
          state.wokenTaskSleepsAgain = true
        }
        return
      }
    }
  }

  /// Waits until the executor has nothing left to run and the task just
  /// woken (if any) sleeps on the clock again; a woken task that does not is
  /// given until `settleLimit` for work from outside the executor (timers,
  /// I/O) to arrive and let it.
  private func settle(on executor: LoopbackExecutor) async {
    await executor.untilQuiet()
    if !state.withLock({ $0.wokenTaskSleepsAgain }) {
      let deadline = ContinuousClock.now.advanced(by: settleLimit)
      while !state.withLock({ $0.wokenTaskSleepsAgain }), ContinuousClock.now < deadline {
        await executor.untilQuietAfterOutsideWork(deadline: deadline)
      }
    }
    if state.withLock({ $0.holds > 0 }) {
      let deadline = ContinuousClock.now.advanced(by: Self.holdLimit)
      while state.withLock({ $0.holds > 0 }), ContinuousClock.now < deadline {
        await executor.untilQuietAfterOutsideWork(deadline: min(deadline, .now.advanced(by: .milliseconds(5))))
      }
    }
    state.withLock { state in
      state.wokenTask = nil
      state.wokenTaskSleepsAgain = true
    }
  }
}
