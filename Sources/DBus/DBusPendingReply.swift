import CDBus

/// One method call waiting for its reply. Confined to the connection's
/// thread once its waiter has set `continuation`: the call is started there,
/// libdbus calls `notify` there, and cancellation hops there, so the
/// continuation is resumed exactly once without a lock.
final class DBusPendingReply: Hashable, @unchecked Sendable {
  private var continuation: CheckedContinuation<DBusMessage, any Error>?
  /// Whether the waiter has called `begin`.
  private var begun = false
  /// A cancellation that came before the waiter's `begin`.
  private var cancellation: (any Error)?
  private var pending: OpaquePointer?
  private var onFinish: ((DBusPendingReply) -> Void)?

  /// Whether the waiter has not been answered yet.
  var isWaiting: Bool { continuation != nil }

  static func == (lhs: DBusPendingReply, rhs: DBusPendingReply) -> Bool { lhs === rhs }
  func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

  /// Takes the waiter; returns `false` (and fails it) when the call was
  /// cancelled before it began.
  func begin(_ continuation: CheckedContinuation<DBusMessage, any Error>) -> Bool {
    begun = true
    guard let cancellation else {
      self.continuation = continuation
      return true
    }
    continuation.resume(throwing: cancellation)
    return false
  }

  /// Takes ownership of libdbus's pending call and waits for it to complete.
  func attach(_ pending: OpaquePointer, onFinish: @escaping (DBusPendingReply) -> Void) {
    self.pending = pending
    self.onFinish = onFinish
    let data = Unmanaged.passRetained(self).toOpaque()
    dbus_pending_call_set_notify(
      pending,
      { call, data in
        Unmanaged<DBusPendingReply>.fromOpaque(data!).takeUnretainedValue().complete(call)
      }, data, { data in Unmanaged<DBusPendingReply>.fromOpaque(data!).release() })
    // A reply cannot have been processed yet (that too happens on this
    // thread), but check rather than rely on it.
    if dbus_pending_call_get_completed(pending) != 0 { complete(pending) }
  }

  private func complete(_ call: OpaquePointer?) {
    guard let call, let reply = dbus_pending_call_steal_reply(call) else {
      finish(.failure(DBusError(name: DBusError.Name.noReply, message: "the call completed without a reply")))
      return
    }
    defer { dbus_message_unref(reply) }
    do {
      let message = try LibDBusMessage.read(reply)
      if let error = message.error {
        finish(.failure(error))
      } else {
        finish(.success(message))
      }
    } catch {
      finish(.failure(error))
    }
  }

  /// Cancels the call (if libdbus still has it) and fails the waiter.
  func cancel(with error: any Error) {
    if let pending { dbus_pending_call_cancel(pending) }
    if !begun, cancellation == nil { cancellation = error }
    finish(.failure(error))
  }

  private func finish(_ result: Result<DBusMessage, any Error>) {
    guard let continuation else { return }
    self.continuation = nil
    if let pending {
      self.pending = nil
      dbus_pending_call_unref(pending)
    }
    onFinish?(self)
    onFinish = nil
    continuation.resume(with: result)
  }
}
