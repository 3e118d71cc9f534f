import Foundation
import GATT
import Loopback
import Synchronization
import Testing

@testable import Scenario

/// The end of an end-to-end run: the devices fall silent, and what they sent
/// before reaches the clients before anything is counted.
struct RunEndDrainTests {
  @Test func aSilencedPlanWithholdsNotificationsWithoutCountingThemLost() {
    let plan = FaultPlan()
    plan.drop(next: 1)
    #expect(plan.verdictNow() == .drop)
    plan.silence()
    #expect(plan.verdictNow() == .withhold)
    #expect(plan.verdictNow() == .withhold)
    #expect(plan.dropped == 1)
  }

  @Test func silenceReleasesANotificationAStallHolds() async {
    let plan = FaultPlan()
    plan.stall(true)
    #expect(plan.verdictNow() == nil)
    let sender = Task { await plan.nextNotification() }
    // The stall holds it until the run ends.
    while plan.held == 0 { try? await Task.sleep(for: .milliseconds(1)) }
    plan.silence()
    #expect(plan.held == 0)
    #expect(await sender.value == .withhold)
    #expect(plan.dropped == 0)
  }

  @Test func everyKindOfReportMovesTheObserversCount() {
    let observer = ClientObserver(clock: VirtualClock())
    #expect(observer.reportCount == 0)
    observer.sample(1, stream: "bvp", device: "wrist")
    observer.samples([1, 2, 3], stream: "bvp", device: "wrist", start: 0, interval: 1)
    observer.samples([(1, "eda", nil)], device: "wrist")
    observer.event("tag", device: "wrist")
    observer.metric("heart-rate", 70, device: "wrist")
    observer.error("bad packet", device: "wrist")
    #expect(observer.reportCount == 6)
  }

  @Test func aWallClockDrainWaitsUntilReportsStopArriving() async {
    let reports = ReportsInFlight()
    // Values still in flight: a report every 50 ms for two seconds, on a
    // thread of their own (as bluetoothd is), whatever the test pool does.
    Thread.detachNewThread {
      for _ in 0..<40 {
        usleep(50_000)
        reports.count.add(1, ordering: .relaxed)
      }
    }
    await WallClockTransport().drain { reports.count.load(ordering: .relaxed) }
    #expect(reports.count.load(ordering: .relaxed) == 40)
  }

  @Test func aWallClockDrainGivesUpOnReportsThatNeverStop() async {
    let reports = ReportsInFlight()
    Thread.detachNewThread {
      while reports.stop.load(ordering: .relaxed) == false {
        usleep(20_000)
        reports.count.add(1, ordering: .relaxed)
      }
    }
    let start = ContinuousClock.now
    await WallClockTransport().drain { reports.count.load(ordering: .relaxed) }
    let waited = ContinuousClock.now - start
    reports.stop.store(true, ordering: .relaxed)
    #expect(waited >= .seconds(5))
    #expect(waited < .seconds(30))
  }
}

/// Reports counted by a thread outside the test's pool.
private final class ReportsInFlight: Sendable {
  let count = Atomic<Int>(0)
  let stop = Atomic<Bool>(false)
}

/// A transport that only has the wall clock's drain: the rest is never called.
private struct WallClockTransport: ScenarioTransport {
  var clock: any Clock<Duration> { ContinuousClock() }
  func host(_ model: any PeripheralModel, device: DeviceSpec) async throws -> any HostedDevice {
    throw GATTError(.notSupported, "not a host")
  }
  func centralLink(for device: DeviceSpec) async throws -> any CentralLink {
    throw GATTError(.notSupported, "not a central")
  }
  func run(for duration: Duration?, granularity: Duration, ended: @escaping @Sendable () -> Bool) async throws {}
  func shutdown() async {}
}
