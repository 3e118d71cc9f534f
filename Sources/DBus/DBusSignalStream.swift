/// Signals matching one rule, in the order they arrived. Iterating ends with
/// an error when the connection closes; when the stream is dropped or its
/// task cancelled, the rule is removed from the bus.
public typealias DBusSignalStream = AsyncThrowingStream<DBusMessage, any Error>

extension DBusConnection {
  /// Subscribes to signals matching `rule`. The rule is on the bus when this
  /// returns, so no signal emitted afterwards is missed.
  ///
  /// Each signal wakes the consuming task; where that costs too much (a
  /// stream of thousands a second), ``receiveSignals(matching:_:)`` hands
  /// them over on the connection's thread instead.
  public func signals(matching rule: DBusMatchRule) async throws -> DBusSignalStream {
    let (stream, continuation) = DBusSignalStream.makeStream(bufferingPolicy: .unbounded)
    let subscription = try await receiveSignals(matching: rule) { event in
      switch event {
      case .signal(let message): continuation.yield(message)
      case .closed(let error): continuation.finish(throwing: error)
      }
    }
    continuation.onTermination = { _ in subscription.cancel() }
    return stream
  }

  /// Subscribes to signals matching `rule` and calls `handler` with each, on
  /// the connection's thread as it is read, in the order they arrived (see
  /// ``DBusSignalSubscription``). The rule is on the bus when this returns,
  /// so no signal emitted afterwards is missed. The subscription lasts until
  /// it is cancelled or the connection closes: dropping it does not end it.
  public func receiveSignals(
    matching rule: DBusMatchRule, _ handler: @escaping @Sendable (DBusSignalSubscription.Event) -> Void
  ) async throws -> DBusSignalSubscription {
    guard isOpen else { throw DBusError.disconnected() }
    if let name = rule.wellKnownSender { try await trackOwner(of: name) }
    do {
      try await busCall("AddMatch", [.string(rule.description)])
    } catch {
      if let name = rule.wellKnownSender { await untrackOwner(of: name) }
      throw error
    }
    let id = nextSubscriptionID
    nextSubscriptionID += 1
    let subscription = DBusSignalSubscription(rule: rule, id: id, connection: self, handler: handler)
    guard isOpen else {
      // Closed while the rule was added: the subscription starts ended.
      subscription.deliver(.closed(DBusError.disconnected()))
      return subscription
    }
    subscriptions[id] = subscription
    return subscription
  }

  func unsubscribe(_ id: Int) async {
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
