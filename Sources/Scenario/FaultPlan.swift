import GATT

/// The faults a scenario's timeline has switched on for one device: what the
/// `FaultInjectingHost` and `ScenarioPeripheral` consult on each notification,
/// read, write and connection.
public actor FaultPlan {
  /// Whether notifications are held, and whether held ones are lost.
  public private(set) var stalled = false
  private var stallDrops = false
  private var stallWaiters: [CheckedContinuation<Void, Never>] = []
  private var dropRemaining = 0
  private var corruptRemaining = 0
  /// How late reads and writes are answered.
  public private(set) var responseDelay: Duration = .zero
  private var rejection: (error: ATTError, remaining: Int?)?
  /// Whether new connections are kept.
  public private(set) var acceptsConnections = true
  /// Notifications lost to `drop` and dropping stalls, and garbled by `corrupt`.
  public private(set) var dropped = 0
  public private(set) var corrupted = 0
  public private(set) var rejectedWrites = 0

  public init() {}

  /// What to do with the next notification.
  enum Verdict {
    case send
    case drop
    case corrupt
  }

  /// Decides the next notification's fate, first waiting out a delaying stall.
  func nextNotification() async -> Verdict {
    if stalled && !stallDrops {
      await withCheckedContinuation { stallWaiters.append($0) }
    }
    if stalled && stallDrops {
      dropped += 1
      return .drop
    }
    if dropRemaining > 0 {
      dropRemaining -= 1
      dropped += 1
      return .drop
    }
    if corruptRemaining > 0 {
      corruptRemaining -= 1
      corrupted += 1
      return .corrupt
    }
    return .send
  }

  public func stall(_ on: Bool, drop: Bool = false) {
    stalled = on
    stallDrops = drop
    if !on {
      let waiters = stallWaiters
      stallWaiters = []
      for waiter in waiters { waiter.resume() }
    }
  }

  public func drop(next count: Int) { dropRemaining += count }
  public func corrupt(next count: Int) { corruptRemaining += count }
  public func delayResponses(by delay: Duration) { responseDelay = delay }
  public func acceptConnections(_ accept: Bool) { acceptsConnections = accept }

  /// Refuses writes with `error` (`nil` accepts them again), `count` of them or all.
  public func rejectWrites(with error: ATTError?, count: Int?) {
    rejection = error.map { ($0, count) }
  }

  /// The error to refuse the next write with, if writes are being refused.
  func nextWriteRejection() -> ATTError? {
    guard let current = rejection else { return nil }
    if let remaining = current.remaining {
      rejection = remaining > 1 ? (current.error, remaining - 1) : nil
    }
    rejectedWrites += 1
    return current.error
  }

  /// Releases any notification held by a stall (at the end of a run).
  func release() { stall(false) }

  /// Garbles a value the way a bad link does: every byte's bits flipped by a
  /// fixed pattern, so an ASCII number is no longer one and a binary frame
  /// fails its checks.
  static func corrupt(_ value: [UInt8]) -> [UInt8] {
    value.isEmpty ? [0xA5] : value.map { $0 ^ 0xA5 }
  }
}
