import GATT
import Synchronization
import Testing

/// `DeviceTimeline` on a clock that does not sleep in place (wall time, as
/// over BlueZ): its loop is a plain sleep and tick. The virtual clock's own
/// loop is tested in `VirtualClockTests`.
@Suite(.timeLimit(.minutes(1)))
struct DeviceTimelineTests {
  @Test func aTickRunsNoEarlierThanTheTimesItReturnsUntilNil() async {
    let timeline = DeviceTimeline(ContinuousClock())
    let late = Mutex<[Duration]>([])
    var due = Duration.milliseconds(5)
    await timeline.repeatedly(from: due) {
      let now = timeline.elapsed()
      late.withLock { $0.append(now - due) }
      guard late.withLock({ $0.count }) < 4 else { return nil }
      due += .milliseconds(5)
      return due
    }
    let lateness = late.withLock { $0 }
    #expect(lateness.count == 4)
    #expect(lateness.allSatisfy { $0 >= .zero }, "\(lateness)")
  }

  @Test func cancellingTheLoopWhileItSleepsEndsIt() async {
    let timeline = DeviceTimeline(ContinuousClock())
    let ticks = Mutex(0)
    let loop = Task {
      await timeline.repeatedly(from: .zero) {
        ticks.withLock { $0 += 1 }
        return timeline.elapsed() + .seconds(3600)
      }
    }
    while ticks.withLock({ $0 }) == 0 { await Task.yield() }
    loop.cancel()
    await loop.value
    #expect(ticks.withLock { $0 } == 1)
  }

  @Test func everyTicksAtItsIntervalUntilCancelled() async {
    let timeline = DeviceTimeline(ContinuousClock())
    let times = Mutex<[Duration]>([])
    let loop = Task {
      await timeline.every(.milliseconds(5)) {
        let now = timeline.elapsed()
        let count = times.withLock {
          $0.append(now)
          return $0.count
        }
        if count == 3 { withUnsafeCurrentTask { $0?.cancel() } }
      }
    }
    await loop.value
    let ticks = times.withLock { $0 }
    #expect(ticks.count == 3)
    #expect(zip(ticks, [5, 10, 15]).allSatisfy { $0 >= .milliseconds($1) }, "\(ticks)")
  }
}
