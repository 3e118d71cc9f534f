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
/// ``cancel()`` never blocks, so it may be called from anywhere: the
/// handler, a task's cancellation handler, under a lock. After it returns
/// no call of the handler begins; one already under way on the connection's
/// thread runs to its end.
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
  /// Held weakly: a subscription does not keep its connection open.
  private weak let connection: DBusConnection?
  private let handler: @Sendable (Event) -> Void
  private let cancelled = Atomic(false)

  init(rule: DBusMatchRule, id: Int, connection: DBusConnection, handler: @escaping @Sendable (Event) -> Void) {
    self.rule = rule
    self.id = id
    self.connection = connection
    self.handler = handler
  }

  /// Whether ``cancel()`` was called.
  public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

  /// Stops the handler and removes the rule from the bus (in the
  /// background). Waits for nothing.
  public func cancel() {
    // No waiting for a call under way: a caller may hold what that call
    // needs (a task cancelled while the handler resumes it: CI, 2026-11-29).
    guard !cancelled.exchange(true, ordering: .acquiringAndReleasing), let connection else { return }
    let id = id
    Task { await connection.unsubscribe(id) }
  }

  /// Calls the handler with `event` unless the subscription was cancelled;
  /// on the connection's thread.
  func deliver(_ event: Event) {
    guard !cancelled.load(ordering: .acquiring) else { return }
    handler(event)
  }
}
