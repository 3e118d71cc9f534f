import GATT
import Synchronization

/// The faults a scenario's timeline has switched on for one device: what the
/// `FaultInjectingHost` and `ScenarioPeripheral` consult on each notification,
/// read, write and connection.
///
/// A class under a lock, not an actor: every notification consults it, and
/// that should not cost two switches of executor.
public final class FaultPlan: Sendable {
  private struct State {
    var silenced = false
    var stalled = false
    var stallDrops = false
    var stallWaiters: [CheckedContinuation<Void, Never>] = []
    var dropRemaining = 0
    var corruptRemaining = 0
    var responseDelay: Duration = .zero
    var rejection: (error: ATTError, remaining: Int?)?
    var acceptsConnections = true
    var dropped = 0
    var corrupted = 0
    var rejectedWrites = 0

    /// The next notification goes out untouched, and deciding so takes nothing from the plan.
    var sendsNext: Bool { !silenced && !stalled && dropRemaining == 0 && corruptRemaining == 0 }
  }

  private let state = Mutex(State())

  public init() {}

  /// Whether notifications are held.
  public var stalled: Bool { state.withLock { $0.stalled } }
  /// How late reads and writes are answered.
  public var responseDelay: Duration { state.withLock { $0.responseDelay } }
  /// Whether new connections are kept.
  public var acceptsConnections: Bool { state.withLock { $0.acceptsConnections } }
  /// Notifications a stall holds now (their senders wait).
  var held: Int { state.withLock { $0.stallWaiters.count } }
  /// Notifications lost to `drop` and dropping stalls.
  public var dropped: Int { state.withLock { $0.dropped } }
  /// Notifications garbled by `corrupt`.
  public var corrupted: Int { state.withLock { $0.corrupted } }
  /// Writes refused by `rejectWrites`.
  public var rejectedWrites: Int { state.withLock { $0.rejectedWrites } }

  /// What to do with the next notification.
  enum Verdict {
    case send
    case drop
    case corrupt
    /// The run ended (`silence()`): not sent, and not counted as lost.
    case withhold
  }

  /// Decides the next notification's fate, first waiting out a delaying stall.
  nonisolated(nonsending) func nextNotification() async -> Verdict {
    while true {
      if let verdict = verdictNow() { return verdict }
      await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
        let held = state.withLock { state in
          guard state.stalled && !state.stallDrops && !state.silenced else { return false }
          state.stallWaiters.append(waiter)
          return true
        }
        if !held { waiter.resume() }
      }
    }
  }

  /// Decides the next notification's fate, or returns `nil` while a stall
  /// holds notifications (then `nextNotification()` waits it out).
  func verdictNow() -> Verdict? {
    state.withLock { state in
      if state.sendsNext { return .send }
      if state.silenced { return .withhold }
      if state.stalled && !state.stallDrops { return nil }
      if state.stalled && state.stallDrops {
        state.dropped += 1
        return .drop
      }
      if state.dropRemaining > 0 {
        state.dropRemaining -= 1
        state.dropped += 1
        return .drop
      }
      if state.corruptRemaining > 0 {
        state.corruptRemaining -= 1
        state.corrupted += 1
        return .corrupt
      }
      return .send
    }
  }

  /// Whether the next notification's verdict is `.send`, which takes
  /// nothing from the plan: a sender may then send at once, without
  /// asking `verdictNow()`.
  func sendsNextNow() -> Bool {
    state.withLock { $0.sendsNext }
  }

  /// Holds notifications (`drop`: loses them) until called with `on` false.
  public func stall(_ on: Bool, drop: Bool = false) {
    let released = state.withLock { state in
      state.stalled = on
      state.stallDrops = drop
      guard !on else { return [CheckedContinuation<Void, Never>]() }
      defer { state.stallWaiters = [] }
      return state.stallWaiters
    }
    for waiter in released { waiter.resume() }
  }

  public func drop(next count: Int) { state.withLock { $0.dropRemaining += count } }
  public func corrupt(next count: Int) { state.withLock { $0.corruptRemaining += count } }
  public func delayResponses(by delay: Duration) { state.withLock { $0.responseDelay = delay } }
  public func acceptConnections(_ accept: Bool) { state.withLock { $0.acceptsConnections = accept } }

  /// Refuses writes with `error` (`nil` accepts them again), `count` of them or all.
  public func rejectWrites(with error: ATTError?, count: Int?) {
    state.withLock { $0.rejection = error.map { ($0, count) } }
  }

  /// The error to refuse the next write with, if writes are being refused.
  func nextWriteRejection() -> ATTError? {
    state.withLock { state in
      guard let current = state.rejection else { return nil }
      if let remaining = current.remaining {
        state.rejection = remaining > 1 ? (current.error, remaining - 1) : nil
      }
      state.rejectedWrites += 1
      return current.error
    }
  }

  /// Releases any notification held by a stall (at the end of a run).
  func release() { stall(false) }

  /// The run ended: from now on the device's notifications and indications
  /// are withheld (not counted as dropped), so what it sent before can reach
  /// the clients while the run drains. Releases a stall's held notifications
  /// into silence.
  func silence() {
    let released = state.withLock { state in
      state.silenced = true
      defer { state.stallWaiters = [] }
      return state.stallWaiters
    }
    for waiter in released { waiter.resume() }
  }

  /// Garbles a value the way a bad link does: every byte's bits flipped by a
  /// fixed pattern, so an ASCII number is no longer one and a binary frame
  /// fails its checks.
  static func corrupt(_ value: [UInt8]) -> [UInt8] {
    value.isEmpty ? [0xA5] : value.map { $0 ^ 0xA5 }
  }
}
