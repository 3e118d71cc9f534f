import GATT
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A task executor with one thread of its own, for a loopback run: device
/// models, the air, client stacks and the scenario all run their jobs here,
/// one at a time in the order they became ready, with no hand-over between
/// threads.
///
/// Because it runs everything, it knows when nothing is ready to run:
/// `untilQuiet()` returns then, which is how a `VirtualClock` bound to it
/// lets an instant settle before time moves on.
///
/// Run work on it with `withTaskExecutorPreference(_:operation:)` or
/// `Task(executorPreference:)`; unstructured tasks started from there keep it
/// when started with `Task(executorPreference: Task.currentExecutorPreference)`.
/// `shutdown()` ends the thread once its queue is empty; jobs that arrive
/// after that run on the global concurrent executor.
public final class LoopbackExecutor: TaskExecutor, Sendable {
  private struct Waiter {
    var continuation: UnsafeContinuation<Void, Never>
    /// Resume only once jobs have run after this count, or at `deadline`.
    var afterJobs: UInt64?
    var deadline: ContinuousClock.Instant?
  }

  /// A task that lets `step` move things on each time the executor is quiet.
  private struct Driver {
    var step: @Sendable () -> Bool
    var continuation: UnsafeContinuation<Void, Never>
  }

  private struct State {
    var jobs: [UnownedJob] = []
    var waiters: [Waiter] = []
    var driver: Driver?
    /// Counts the jobs run.
    var jobsRun: UInt64 = 0
    /// The thread waits for a job.
    var idle = false
    var shuttingDown = false
    var ended = false
  }

  private let state = Mutex(State())
  private let signal = WakeSignal()
  /// The thread's `pthread_self()`, once it runs.
  private let thread = Atomic<UInt>(0)
  /// Jobs of the batch being run that have not started yet; only the thread uses it.
  nonisolated(unsafe) private var unrunInBatch = 0

  /// Starts the executor's thread.
  public init() {
    let box = Unmanaged.passRetained(self)
    var handle = pthread_t()
    let created = pthread_create(
      &handle, nil,
      { context in
        let executor = Unmanaged<LoopbackExecutor>.fromOpaque(context!).takeRetainedValue()
        executor.runLoop()
        return nil
      }, box.toOpaque())
    precondition(created == 0, "cannot start the loopback executor's thread: error \(created)")
    pthread_detach(handle)
  }

  /// Whether the caller runs on this executor's thread.
  public var isCurrent: Bool {
    thread.load(ordering: .relaxed) == UInt(pthread_self())
  }

  public func enqueue(_ job: consuming ExecutorJob) {
    let unowned = UnownedJob(job)
    if !hand({ $0.jobs.append(unowned) }) { globalConcurrentExecutor.enqueue(unowned) }
  }

  /// Returns once nothing else is ready to run on this executor: every job
  /// enqueued before or while waiting has run, and the ones they enqueued.
  public func untilQuiet() async {
    // On the thread, with nothing queued, it is quiet now: the caller's job is the only one.
    if isCurrent, unrunInBatch == 0, state.withLock({ $0.jobs.isEmpty && $0.waiters.isEmpty }) { return }
    await withUnsafeContinuation { continuation in
      add(Waiter(continuation: continuation, afterJobs: nil, deadline: nil))
    }
  }

  /// Returns once some job has run after this call (when called from a quiet
  /// executor: one that came from another thread, a timer or I/O) and
  /// nothing else is ready to run, or at `deadline` (wall time) when nothing is.
  public func untilQuietAfterOutsideWork(deadline: ContinuousClock.Instant) async {
    await withUnsafeContinuation { continuation in
      let jobsRun = state.withLock { $0.jobsRun }
      add(Waiter(continuation: continuation, afterJobs: jobsRun, deadline: deadline))
    }
  }

  /// Calls `step` on the executor's thread each time nothing is ready to run
  /// (after the `untilQuiet()` waiters have had their turn), and returns once
  /// it returns `false`. `step` starts more work (resumes a task) and returns
  /// `true`, or returns `false` when it has nothing more to start; it must not
  /// block. This is how a `VirtualClock` moves from instant to instant
  /// without a task switch per instant. One caller at a time.
  public func whileQuiet(_ step: @escaping @Sendable () -> Bool) async {
    await withUnsafeContinuation { continuation in
      let handed = hand { state in
        precondition(state.driver == nil, "LoopbackExecutor.whileQuiet: one caller at a time")
        state.driver = Driver(step: step, continuation: continuation)
      }
      // Ended: nothing runs here any more, so there is nothing to step.
      if !handed { continuation.resume() }
    }
  }

  /// How many jobs have run on the executor so far.
  public var jobsRun: UInt64 { state.withLock { $0.jobsRun } }

  /// Ends the thread once its queue is empty.
  public func shutdown() {
    let wake = state.withLock { state in
      state.shuttingDown = true
      defer { state.idle = false }
      return state.idle
    }
    if wake { signal.wake() }
  }

  private func add(_ waiter: Waiter) {
    // Ended: nothing runs here any more, so it is quiet.
    if !hand({ $0.waiters.append(waiter) }) { waiter.continuation.resume() }
  }

  /// Puts something where the thread takes it (`put` runs under the lock),
  /// waking the thread if it waits; `false`, without calling `put`, once the
  /// executor has ended.
  private func hand(_ put: (inout State) -> Void) -> Bool {
    let (handed, wake) = state.withLock { state -> (Bool, Bool) in
      if state.ended { return (false, false) }
      put(&state)
      guard state.idle else { return (true, false) }
      state.idle = false
      return (true, true)
    }
    if wake { signal.wake() }
    return handed
  }

  private func runLoop() {
    thread.store(UInt(pthread_self()), ordering: .relaxed)
    let me = asUnownedTaskExecutor()
    var batch: [UnownedJob] = []
    while true {
      enum Next {
        case run
        case resume([UnsafeContinuation<Void, Never>])
        case step(Driver)
        case wait(ContinuousClock.Instant?)
        case end([UnsafeContinuation<Void, Never>])
      }
      let next: Next = state.withLock { state in
        state.idle = false
        if !state.jobs.isEmpty {
          swap(&batch, &state.jobs)
          state.jobsRun &+= UInt64(batch.count)
          return .run
        }
        if !state.waiters.isEmpty {
          let now = ContinuousClock.now
          let jobsRun = state.jobsRun
          var ready: [UnsafeContinuation<Void, Never>] = []
          var earliest: ContinuousClock.Instant?
          state.waiters.removeAll { waiter in
            let due =
              waiter.afterJobs.map { $0 != jobsRun } ?? true
              || waiter.deadline.map { now >= $0 } ?? false
            if due {
              ready.append(waiter.continuation)
            } else if let deadline = waiter.deadline {
              earliest = min(earliest ?? deadline, deadline)
            }
            return due
          }
          if !ready.isEmpty { return .resume(ready) }
          if let driver = state.driver {
            state.driver = nil
            return .step(driver)
          }
          if state.shuttingDown {
            state.ended = true
            return .end(state.waiters.map(\.continuation))
          }
          state.idle = true
          return .wait(earliest)
        }
        if let driver = state.driver {
          state.driver = nil
          return .step(driver)
        }
        if state.shuttingDown {
          state.ended = true
          return .end([])
        }
        state.idle = true
        return .wait(nil)
      }
      switch next {
      case .run:
        unrunInBatch = batch.count
        for job in batch {
          unrunInBatch -= 1
          job.runSynchronously(on: me)
        }
        batch.removeAll(keepingCapacity: true)
      case .resume(let continuations):
        for continuation in continuations { continuation.resume() }
      case .step(let driver):
        if driver.step() {
          state.withLock { $0.driver = driver }
        } else {
          driver.continuation.resume()
        }
      case .wait(let deadline):
        signal.wait(until: deadline)
      case .end(let continuations):
        for continuation in continuations { continuation.resume() }
        return
      }
    }
  }
}
