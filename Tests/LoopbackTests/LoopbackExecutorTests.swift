import GATT
import Loopback
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct LoopbackExecutorTests {
  /// Passes a token through `hops` tasks, each waiting on the one before, and
  /// logs `label` with the clock's time when the last one has it.
  static func chain(
    _ hops: Int, label: String, clock: VirtualClock, log: EventLog<String>
  ) async -> AsyncStream<Void>.Continuation {
    let (first, start) = AsyncStream.makeStream(of: Void.self)
    var input = first
    for _ in 0..<hops {
      let (next, forward) = AsyncStream.makeStream(of: Void.self)
      let from = input
      Task(executorPreference: Task.currentExecutorPreference) {
        for await _ in from { forward.yield() }
        forward.finish()
      }
      input = next
    }
    let last = input
    Task(executorPreference: Task.currentExecutorPreference) {
      for await _ in last { await log.append("\(label) at \(clock.now.offset)") }
    }
    return start
  }

  @Test func runsTasksTheirUnstructuredTasksAndDefaultActorsOnItsThread() async {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let log = EventLog<String>()
    let onThread = await withTaskExecutorPreference(executor) {
      let inner = Task(executorPreference: Task.currentExecutorPreference) {
        await log.append("inner")
        return executor.isCurrent
      }
      let plain = Task { executor.isCurrent }
      return [executor.isCurrent, await inner.value, await plain.value]
    }
    // The scope and the task that kept the preference ran there; `Task { }` did not.
    #expect(onThread == [true, true, false])
    #expect(await log.entries == ["inner"])
    #expect(!executor.isCurrent)
  }

  @Test func isQuietOnlyOnceEveryReadyTaskHasRun() async {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let done = EventLog<Int>()
    await withTaskExecutorPreference(executor) {
      for _ in 0..<20 {
        Task(executorPreference: Task.currentExecutorPreference) {
          for _ in 0..<200 { await Task.yield() }
          await done.append(1)
        }
      }
      await executor.untilQuiet()
      #expect(await done.entries.count == 20)
    }
    // From outside the executor too.
    Task(executorPreference: executor) {
      for _ in 0..<200 { await Task.yield() }
      await done.append(1)
    }
    await executor.untilQuiet()
    #expect(await done.entries.count == 21)
  }

  @Test func waitsForWorkFromOutsideUntilItsDeadline() async {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let resumed = EventLog<Bool>()
    await withTaskExecutorPreference(executor) {
      let waiting = Task(executorPreference: Task.currentExecutorPreference) {
        // Resumed from a task on the global executor, 20 ms from now.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
          Task.detached(executorPreference: globalConcurrentExecutor) {
            try? await Task.sleep(for: .milliseconds(20))
            continuation.resume()
          }
        }
        await resumed.append(true)
      }
      await executor.untilQuiet()
      let start = ContinuousClock.now
      // A deadline far off, so that returning on the work (20 ms) and returning at
      // the deadline stay apart on a machine as loaded as CI's.
      await executor.untilQuietAfterOutsideWork(deadline: start.advanced(by: .seconds(120)))
      #expect(await resumed.entries == [true])
      #expect(ContinuousClock.now - start < .seconds(60))
      await waiting.value
      // Nothing comes: it returns at the deadline.
      let idle = ContinuousClock.now
      await executor.untilQuietAfterOutsideWork(deadline: idle.advanced(by: .milliseconds(30)))
      #expect(ContinuousClock.now - idle >= .milliseconds(30))
    }
  }

  @Test func aClockOnTheExecutorLetsLongChainsFinishBeforeTimeMovesOn() async {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let clock = VirtualClock(executor: executor)
    let log = EventLog<String>()
    await withTaskExecutorPreference(executor) {
      // A chain of 300 hops, far more than a count of quiet turns would wait for.
      let start = await Self.chain(300, label: "chain", clock: clock, log: log)
      let ticker = Task(executorPreference: Task.currentExecutorPreference) {
        for _ in 0..<3 {
          try await clock.sleep(for: .milliseconds(10))
          start.yield()
        }
      }
      await clock.advance(by: .milliseconds(30))
      #expect(
        await log.entries == ["chain at 0.01 seconds", "chain at 0.02 seconds", "chain at 0.03 seconds"])
      ticker.cancel()
      start.finish()
    }
    #expect(clock.sleepsOffExecutor == 0)
  }

  @Test func aDriverStepsOnlyWhenNothingElseIsReadyToRun() async {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let log = EventLog<String>()
    await withTaskExecutorPreference(executor) {
      let (ready, go) = AsyncStream.makeStream(of: Int.self)
      let worker = Task(executorPreference: Task.currentExecutorPreference) {
        for await n in ready {
          // Three hops per item: the step must wait for all of them.
          await Task.yield()
          await Task.yield()
          await log.append("item \(n)")
        }
      }
      let steps = Mutex(0)
      await executor.whileQuiet {
        let step = steps.withLock { count in
          count += 1
          return count
        }
        guard step <= 3 else { return false }
        go.yield(step)
        return true
      }
      #expect(await log.entries == ["item 1", "item 2", "item 3"])
      #expect(steps.withLock { $0 } == 4)
      go.finish()
      await worker.value
    }
  }

  @Test func timeStopsAtTheInstantTheStopConditionHolds() async {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let clock = VirtualClock(executor: executor)
    final class Run: Sendable {
      let ended = Atomic<Bool>(false)
      let ticks = Atomic<Int>(0)
    }
    let run = Run()
    await withTaskExecutorPreference(executor) {
      let ticker = Task(executorPreference: Task.currentExecutorPreference) {
        while true {
          try await clock.sleep(for: .milliseconds(10))
          // The fifth tick ends the run.
          if run.ticks.add(1, ordering: .relaxed).newValue == 5 { run.ended.store(true, ordering: .relaxed) }
        }
      }
      await clock.advance(to: .origin.advanced(by: .seconds(3600))) { run.ended.load(ordering: .relaxed) }
      #expect(clock.now == .origin.advanced(by: .milliseconds(50)))
      #expect(run.ticks.load(ordering: .relaxed) == 5)
      ticker.cancel()
    }
  }

  @Test func timeWaitsForWorkItsClockIsHeldFor() async throws {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let clock = VirtualClock(executor: executor)
    try await withTaskExecutorPreference(executor) {
      let seen = EventLog<String>()
      let starter = Task(executorPreference: Task.currentExecutorPreference) {
        // Work on another thread that takes 50 ms of wall time and no virtual time.
        let at = try await clock.holding {
          try await Task.detached(executorPreference: globalConcurrentExecutor) {
            try await Task.sleep(for: .milliseconds(50))
          }.value
          return clock.now
        }
        await seen.append("started at \(at.offset)")
      }
      let timeout = Task(executorPreference: Task.currentExecutorPreference) {
        try await clock.sleep(for: .seconds(1))
        await seen.append("timeout at \(clock.now.offset)")
      }
      await clock.advance(by: .seconds(2))
      try await starter.value
      try await timeout.value
      #expect(await seen.entries == ["started at 0.0 seconds", "timeout at 1.0 seconds"])
    }
  }

  @Test func countsSleepsThatEscapedTheExecutor() async throws {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let clock = VirtualClock(executor: executor)
    let escaped = Task { try await clock.sleep(for: .seconds(1)) }
    await VirtualClockTests.waitForSleepers(1, on: clock)
    #expect(clock.sleepsOffExecutor == 1)
    await clock.advance(by: .seconds(1))
    try await escaped.value
  }

  @Test func afterShutdownJobsRunOnTheGlobalExecutor() async {
    let executor = LoopbackExecutor()
    executor.shutdown()
    await executor.untilQuiet()
    let result = await Task(executorPreference: executor) {
      await Task.yield()
      return executor.isCurrent
    }.value
    #expect(result == false)
  }
}
