import Synchronization

/// A live subscription to the signals matching a rule, whose handler runs on
/// the connection's thread as each signal is read
/// (``DBusConnection/receiveSignals(matching:_:)``): no task is woken per
/// signal, which is what a ``DBusSignalStream`` costs.
///
/// The handler is called with the signals in the order they arrived, one at
/// a time, then once with ``Event/closed(_:)`` when the connection is closed
/// or the bus drops it. It runs while the connection waits, so it must be
/// quick and must not block: hand the signal on (to a stream's
/// continuation, a counter, a buffer under a lock of its own), do not await
/// anything.
///
/// After ``cancel()`` returns, the handler is not running and is not called
/// again: called from another thread, `cancel` waits for a call in
/// progress. So do not call it while holding a lock the handler takes, nor
/// from a handler of another connection that this one's handler may cancel
/// in turn.
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
  /// The connection's thread (its core, held weakly: a subscription keeps
  /// neither the connection nor its thread).
  private weak let thread: DBusEventThread.Core?
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
    self.thread = thread.core
    self.handler = handler
  }

  /// Whether ``cancel()`` was called.
  public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

  /// Stops the handler and removes the rule from the bus (in the
  /// background). Called from the handler itself, the call in progress
  /// finishes and no other follows.
  public func cancel() {
    let first = !cancelled.exchange(true, ordering: .acquiringAndReleasing)
    // The handler runs only on the connection's thread: from any other, wait
    // for a call in progress to return (every caller, not only the first).
    if thread?.isCurrent != true { delivering.withLock { _ in } }
    guard first, let connection else { return }
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
