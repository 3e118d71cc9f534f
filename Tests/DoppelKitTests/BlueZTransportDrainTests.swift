import Synchronization
import Testing

@testable import DoppelKit

/// The end of a run over BlueZ waits until the clients received what the
/// devices sent, and no longer than that once nothing more arrives.
@Suite(.timeLimit(.minutes(1)))
struct BlueZTransportDrainTests {
  /// A received count that grows by `step` (up to `ceiling`) each time the
  /// wait looks at it, so that progress does not hang on how a loaded
  /// machine schedules a feeding task; it also counts the looks.
  final class Arrivals: Sendable {
    private let state: Mutex<(count: Int, looks: Int)> = Mutex((0, 0))
    let step: Int
    let ceiling: Int
    init(step: Int, ceiling: Int) {
      self.step = step
      self.ceiling = ceiling
    }
    func look() -> Int {
      state.withLock { state in
        state.looks += 1
        defer { state.count = min(state.count + step, ceiling) }
        return state.count
      }
    }
    var looks: Int { state.withLock { $0.looks } }
  }

  @Test func endsAsSoonAsEverythingSentArrived() async {
    let arrivals = Arrivals(step: 5, ceiling: 100)
    let counts = await BlueZTransport.waitUntilReceived(
      { arrivals.look() }, reach: { 100 }, stillFor: .seconds(30), limit: .seconds(50))
    #expect(counts == (sent: 100, received: 100))
    // 0, 5, … 100: the look that saw 100 was the last.
    #expect(arrivals.looks == 21)
  }

  @Test func waitsWhileNotificationsKeepArrivingLongerThanTheStillPeriod() async {
    // One arrival a look, 50 ms apart: 120 of them take 6 s, twenty times
    // the 300 ms a count may stand still.
    let arrivals = Arrivals(step: 1, ceiling: 120)
    let counts = await BlueZTransport.waitUntilReceived(
      { arrivals.look() }, reach: { 120 }, stillFor: .milliseconds(300), limit: .seconds(50))
    #expect(counts == (sent: 120, received: 120))
  }

  @Test func givesUpOnceNothingMoreArrives() async {
    // Three notifications were lost with a link: the count stops at 97.
    let clock = ContinuousClock()
    let start = clock.now
    let counts = await BlueZTransport.waitUntilReceived(
      { 97 }, reach: { 100 }, stillFor: .milliseconds(300), limit: .seconds(50))
    let waited = clock.now - start
    #expect(counts == (sent: 100, received: 97))
    #expect(waited >= .milliseconds(300))
    #expect(waited < .seconds(50))
  }

  @Test func givesUpAtTheLimitEvenWhileTheCountMoves() async {
    let arrivals = Arrivals(step: 1, ceiling: .max)
    let clock = ContinuousClock()
    let start = clock.now
    let counts = await BlueZTransport.waitUntilReceived(
      { arrivals.look() }, reach: { 1_000_000 }, stillFor: .seconds(50), limit: .milliseconds(500))
    let waited = clock.now - start
    #expect(counts.received < 1_000_000)
    #expect(waited >= .milliseconds(500))
    #expect(waited < .seconds(50))
  }
}
