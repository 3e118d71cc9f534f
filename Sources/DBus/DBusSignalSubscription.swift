import Synchronization

/// A live subscription to the signals matching a rule, whose handler runs on
/// the connection's thread as each signal is read
/// (``DBusConnection/receiveSignals(matching:_:)``): no task is woken per
/// signal, which is what a ``DBusSignalStream`` costs.
///
/// The handler is called with the signals in the order they arrived, one at
/// a time, then once with ``Event/closed(_:)`` if the connection closes. It
/// runs while the connection waits, so it must be quick and must not block:
/// hand the signal on (to a stream's continuation, a counter, a lock-guarded
/// buffer), do not await anything. After ``cancel()`` returns, the handler
/// is not called again.
public final class DBusSignalSubscription: Sendable {
  /// What the handler is given.
  public enum Event: Sendable {
    /// A signal matching the rule.
    case signal(DBusMessage)
    /// The connection closed (or was closed): nothing follows.
    case closed(DBusError)
  }

  /// The rule the signals match.
  public let rule: DBusMatchRule
  let id: Int
  private weak let connection: DBusConnection?
  private let thread: DBusEventThread
  private let handler: @Sendable (Event) -> Void
  private let cancelled = Atomic(false)
  /// Held while the handler runs, so that `cancel` can wait out a call in flight.
  private let delivering = Mutex(())

  init(
    rule: DBusMatchRule, id: Int, connection: DBusConnection, thread: DBusEventThread,
    handler: @escaping @Sendable (Event) -> Void
  ) {
    self.rule = rule
    self.id = id
    self.connection = connection
    self.thread = thread
    self.handler = handler
  }

  /// Whether ``cancel()`` was called.
  public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

  /// Stops the handler at once and removes the rule from the bus (in the
  /// background). Called from the handler itself, the call in progress
  /// finishes and no other follows.
  public func cancel() {
    guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
    // The handler runs only on the connection's thread: from any other, wait
    // for a call in flight to return.
    if !thread.isCurrent { delivering.withLock { _ in } }
    guard let connection else { return }
    let id = id
    Task { await connection.unsubscribe(id) }
  }

  /// Calls the handler with `event` unless the subscription was cancelled;
  /// on the connection's thread.
  func deliver(_ event: Event) {
    delivering.withLock { _ in
      guard !cancelled.load(ordering: .acquiring) else { return }
      handler(event)
    }
  }
}
