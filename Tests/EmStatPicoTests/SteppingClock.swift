import GATT
import Loopback
import Synchronization

/// A clock whose sleeps return at once, moving its time to their deadline:
/// runs a script's timing in no wall time, for tests of the interpreter alone.
final class SteppingClock: Clock, Sendable {
  typealias Instant = VirtualClock.Instant
  private let time = Mutex(VirtualClock.Instant(offset: .zero))

  var now: Instant { time.withLock { $0 } }
  var minimumResolution: Duration { .zero }

  func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    try Task.checkCancellation()
    time.withLock { if $0 < deadline { $0 = deadline } }
  }
}
