/// Signals matching one rule, in the order they arrived. Iterating ends with
/// an error when the connection closes; when the stream is dropped or its
/// task cancelled, the rule is removed from the bus.
public typealias DBusSignalStream = AsyncThrowingStream<DBusMessage, any Error>

/// A live subscription, kept by the connection.
struct DBusSignalSubscriptionState: Sendable {
  let rule: DBusMatchRule
  let continuation: DBusSignalStream.Continuation
}

extension DBusConnection {
  /// Subscribes to signals matching `rule`. The rule is on the bus when this
  /// returns, so no signal emitted afterwards is missed.
  public func signals(matching rule: DBusMatchRule) async throws -> DBusSignalStream {
    guard isOpen else { throw DBusError.disconnected() }
    if let name = rule.wellKnownSender { try await trackOwner(of: name) }
    try await busCall("AddMatch", [.string(rule.description)])
    let id = nextSubscriptionID
    nextSubscriptionID += 1
    let (stream, continuation) = DBusSignalStream.makeStream(bufferingPolicy: .unbounded)
    subscriptions[id] = DBusSignalSubscriptionState(rule: rule, continuation: continuation)
    continuation.onTermination = { [weak self] _ in
      Task { await self?.unsubscribe(id) }
    }
    return stream
  }

  private func unsubscribe(_ id: Int) async {
    guard let subscription = subscriptions.removeValue(forKey: id), isOpen else { return }
    _ = try? await busCall("RemoveMatch", [.string(subscription.rule.description)])
    if let name = subscription.rule.wellKnownSender { await untrackOwner(of: name) }
  }

  /// Follows the owner of a well-known name, for matching signals by sender.
  private func trackOwner(of name: String) async throws {
    trackedNames[name, default: 0] += 1
    guard trackedNames[name] == 1 else { return }
    try await busCall("AddMatch", [.string(Self.ownerRule(name))])
    if let owner = try await nameOwner(of: name) { nameOwners[name] = owner }
  }

  private func untrackOwner(of name: String) async {
    trackedNames[name, default: 1] -= 1
    guard trackedNames[name] == 0 else { return }
    trackedNames[name] = nil
    nameOwners[name] = nil
    _ = try? await busCall("RemoveMatch", [.string(Self.ownerRule(name))])
  }

  private static func ownerRule(_ name: String) -> String {
    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
  }

  @discardableResult
  func busCall(_ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
    try await call(
      destination: "org.freedesktop.DBus", path: ObjectPath("/org/freedesktop/DBus"), interface: "org.freedesktop.DBus",
      method: method, arguments: arguments)
  }
}
