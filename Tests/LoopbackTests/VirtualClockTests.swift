import GATT
import Loopback
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct VirtualClockTests {
  typealias Instant = VirtualClock.Instant

  /// Waits (without moving time) until `count` tasks sleep on the clock.
  static func waitForSleepers(_ count: Int, on clock: VirtualClock) async {
    while clock.sleeperCount < count {
      await Task.yield()
    }
  }

  @Test func wakesSleepersInDeadlineOrderAtTheirDeadlines() async {
    let clock = VirtualClock()
    let log = EventLog<String>()
    let tasks = [30, 10, 20].map { milliseconds in
      Task {
        try await clock.sleep(for: .milliseconds(milliseconds))
        await log.append("\(milliseconds) at \(clock.now.offset)")
      }
    }
    await Self.waitForSleepers(3, on: clock)
    #expect(clock.nextDeadline == Instant(offset: .milliseconds(10)))
    await clock.advance(by: .milliseconds(30))
    #expect(
      await log.entries == ["10 at 0.01 seconds", "20 at 0.02 seconds", "30 at 0.03 seconds"])
    #expect(clock.now == Instant(offset: .milliseconds(30)))
    #expect(clock.sleeperCount == 0)
    for task in tasks { task.cancel() }
  }

  @Test func equalDeadlinesWakeInTheOrderTheyWentToSleep() async {
    let clock = VirtualClock()
    let log = EventLog<Int>()
    var tasks: [Task<Void, any Error>] = []
    for index in 0..<5 {
      tasks.append(
        Task {
          try await clock.sleep(until: Instant(offset: .seconds(1)))
          await log.append(index)
        })
      await Self.waitForSleepers(index + 1, on: clock)
    }
    await clock.advance(to: Instant(offset: .seconds(1)))
    #expect(await log.entries == [0, 1, 2, 3, 4])
    for task in tasks { task.cancel() }
  }

  @Test func letsAWokenTaskRunAndSleepAgainBeforeMovingOn() async {
    let clock = VirtualClock()
    let log = EventLog<String>()
    let repeating = Task {
      for _ in 0..<3 {
        try await clock.sleep(for: .milliseconds(10))
        await log.append("A \(clock.now.offset)")
      }
    }
    let once = Task {
      try await clock.sleep(for: .milliseconds(15))
      await log.append("B \(clock.now.offset)")
    }
    await Self.waitForSleepers(2, on: clock)
    await clock.advance(by: .milliseconds(25))
    #expect(
      await log.entries == ["A 0.01 seconds", "B 0.015 seconds", "A 0.02 seconds"])
    #expect(clock.sleeperCount == 1)
    #expect(clock.nextDeadline == Instant(offset: .milliseconds(30)))
    await clock.advance(by: .milliseconds(5))
    #expect(await log.entries.last == "A 0.03 seconds")
    #expect(clock.sleeperCount == 0)
    repeating.cancel()
    once.cancel()
  }

  @Test func doesNotWakeSleepersBeforeTheirDeadline() async throws {
    let clock = VirtualClock()
    let sleeper = Task { try await clock.sleep(for: .milliseconds(50)) }
    await Self.waitForSleepers(1, on: clock)
    await clock.advance(by: .milliseconds(49))
    #expect(clock.sleeperCount == 1)
    #expect(clock.now.offset == .milliseconds(49))
    await clock.advance(by: .milliseconds(1))
    try await sleeper.value
    #expect(clock.sleeperCount == 0)
  }

  @Test func cancellingASleeperThrowsAndRemovesIt() async {
    let clock = VirtualClock()
    let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
    await Self.waitForSleepers(1, on: clock)
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(clock.sleeperCount == 0)
    #expect(clock.now == .origin)
  }

  @Test func aCancelledTaskDoesNotSleep() async {
    let clock = VirtualClock()
    let sleeper = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(for: .seconds(1))
    }
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(clock.sleeperCount == 0)
  }

  @Test func aDeadlineInThePastReturnsAtOnce() async throws {
    let clock = VirtualClock(now: Instant(offset: .seconds(5)))
    try await clock.sleep(until: Instant(offset: .seconds(4)))
    try await clock.sleep(for: .zero)
    #expect(clock.now.offset == .seconds(5))
  }

  @Test func runsUntilIdleThroughAChainOfSleeps() async throws {
    let clock = VirtualClock()
    // A child task, so that if the clock stopped early the time limit would
    // cancel it and the test would fail instead of hanging.
    async let end: Instant = {
      for _ in 0..<600 {
        try await clock.sleep(for: .seconds(1))
      }
      return clock.now
    }()
    await Self.waitForSleepers(1, on: clock)
    await clock.runUntilIdle()
    #expect(try await end == Instant(offset: .seconds(600)))
    #expect(clock.now.offset == .seconds(600))
  }

  @Test func runUntilIdleStopsAtItsLimit() async {
    let clock = VirtualClock()
    let forever = Task {
      while true {
        try await clock.sleep(for: .seconds(1))
      }
    }
    await Self.waitForSleepers(1, on: clock)
    await clock.runUntilIdle(upTo: .seconds(10.5))
    #expect(clock.now.offset == .seconds(10.5))
    #expect(clock.nextDeadline == Instant(offset: .seconds(11)))
    forever.cancel()
  }

  @Test func worksAsAnyClock() async throws {
    let virtual = VirtualClock()
    let clock: any Clock<Duration> = virtual
    let sleeper = Task { try await clock.sleep(for: .seconds(3)) }
    await Self.waitForSleepers(1, on: virtual)
    await virtual.advance(by: .seconds(3))
    try await sleeper.value
    #expect(virtual.now.offset == .seconds(3))
  }
  // MARK: - A device's periodic loop (`repeatedly`), the sleeps of `DeviceTimeline`

  @Test func aRepeatedTickRunsAtTheTimesItReturnsUntilNil() async {
    let clock = VirtualClock()
    let log = EventLog<Duration>()
    let times: [Duration] = [.milliseconds(25), .milliseconds(40), .milliseconds(40)]
    let loop = Task {
      var index = 0
      await clock.repeatedly(after: clock.now, from: .milliseconds(10)) {
        await log.append(clock.now.offset)
        guard index < times.count else { return nil }
        defer { index += 1 }
        return times[index]
      }
    }
    await Self.waitForSleepers(1, on: clock)
    await clock.advance(by: .seconds(1))
    await loop.value
    // 40 ms twice: a time already reached ticks again at once, as `sleep(until:)` returns at once.
    #expect(
      await log.entries == [.milliseconds(10), .milliseconds(25), .milliseconds(40), .milliseconds(40)])
    #expect(clock.sleeperCount == 0)
  }

  @Test func aRepeatedTickInterleavesWithOtherSleepersInDeadlineOrder() async {
    let clock = VirtualClock()
    let log = EventLog<String>()
    let loop = Task {
      var next = Duration.zero
      await clock.repeatedly(after: clock.now, from: .milliseconds(10)) {
        next += .milliseconds(10)
        await log.append("tick \(clock.now.offset)")
        return next < .milliseconds(40) ? next + .milliseconds(10) : nil
      }
    }
    let sleeper = Task {
      try await clock.sleep(until: Instant(offset: .milliseconds(25)))
      await log.append("sleeper \(clock.now.offset)")
    }
    await Self.waitForSleepers(2, on: clock)
    await clock.advance(by: .seconds(1))
    await loop.value
    try? await sleeper.value
    #expect(
      await log.entries == [
        "tick 0.01 seconds", "tick 0.02 seconds", "sleeper 0.025 seconds", "tick 0.03 seconds", "tick 0.04 seconds",
      ])
  }

  @Test func cancellingARepeatedLoopWhileItSleepsEndsIt() async {
    let clock = VirtualClock()
    let ticks = Counter()
    let loop = Task {
      await clock.repeatedly(after: clock.now, from: .seconds(1)) {
        ticks.increment()
        return clock.now.offset + .seconds(1)
      }
    }
    await Self.waitForSleepers(1, on: clock)
    await clock.advance(by: .seconds(3))
    await Self.waitForSleepers(1, on: clock)
    loop.cancel()
    await loop.value
    #expect(ticks.value == 3)
    #expect(clock.sleeperCount == 0)
    // Nothing of the loop wakes later.
    await clock.advance(by: .seconds(3))
    #expect(ticks.value == 3)
  }

  /// Cancellations from another thread, landing at any point of the loop
  /// (while it ticks, registers its next sleep, or sleeps): every loop ends
  /// and leaves no sleeper. A cancellation lost between two sleeps would
  /// leave its loop asleep for good, and the suite's time limit would fail it.
  @Test func aRepeatedLoopCancelledAtAnyPointEnds() async {
    for round in 0..<300 {
      let clock = VirtualClock()
      let loop = Task.detached {
        await clock.repeatedly(after: clock.now, from: .milliseconds(1)) { clock.now.offset + .milliseconds(1) }
      }
      let driver = Task.detached {
        while !Task.isCancelled { await clock.advance(by: .milliseconds(1)) }
      }
      for _ in 0..<(round % 7) { await Task.yield() }
      loop.cancel()
      await loop.value
      driver.cancel()
      await driver.value
      #expect(clock.sleeperCount == 0, "round \(round)")
    }
  }

  @Test func aRepeatedLoopCancelledDuringItsTickDoesNotSleepAgain() async {
    let clock = VirtualClock()
    let ticks = Counter()
    let loop = Task {
      await clock.repeatedly(after: clock.now, from: .seconds(1)) {
        ticks.increment()
        // Cancelled while ticking, as a model's `stop()` may be: between two sleeps.
        if ticks.value == 2 { withUnsafeCurrentTask { $0?.cancel() } }
        return clock.now.offset + .seconds(1)
      }
    }
    await Self.waitForSleepers(1, on: clock)
    await clock.advance(by: .seconds(5))
    await loop.value
    #expect(ticks.value == 2)
    #expect(clock.sleeperCount == 0)
  }

  @Test func aCancelledTaskDoesNotStartARepeatedLoop() async {
    let clock = VirtualClock()
    let ticks = Counter()
    let loop = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      await clock.repeatedly(after: clock.now, from: .zero) {
        ticks.increment()
        return nil
      }
    }
    await loop.value
    #expect(ticks.value == 0)
    #expect(clock.sleeperCount == 0)
  }

  @Test func aDeviceTimelineOnTheVirtualClockRepeatsFromItsStart() async {
    let clock = VirtualClock(now: Instant(offset: .seconds(100)))
    let timeline = DeviceTimeline(clock)
    let log = EventLog<Duration>()
    let loop = Task {
      await timeline.repeatedly(from: .seconds(1)) {
        await log.append(timeline.elapsed())
        let next = timeline.elapsed() + .seconds(2)
        return next <= .seconds(5) ? next : nil
      }
    }
    await Self.waitForSleepers(1, on: clock)
    await clock.advance(by: .seconds(10))
    await loop.value
    #expect(await log.entries == [.seconds(1), .seconds(3), .seconds(5)])
    #expect(clock.now.offset == .seconds(110))
  }
}

/// A count taken from the tasks under test.
final class Counter: Sendable {
  private let count = Mutex(0)
  var value: Int { count.withLock { $0 } }
  func increment() { count.withLock { $0 += 1 } }
}
