import Synchronization

/// What a hosted device sees happen that a timeline can wait for
/// (`after: connected`, `after: start-streaming`, …), passed on to every
/// listener as it happens. Safe to feed from any context, so firmware events,
/// which a model reports synchronously, arrive in order with link events.
final class DeviceEventFeed: Sendable {
  /// One thing the device saw.
  struct Event: Sendable, Hashable {
    /// `connected`, `disconnected`, `subscribed`, or a firmware event's name.
    var name: String
    /// The characteristic's key, for `subscribed`.
    var characteristic: String?

    static let connected = Event(name: "connected")
    static let disconnected = Event(name: "disconnected")
    static func subscribed(_ characteristic: String) -> Event {
      Event(name: "subscribed", characteristic: characteristic)
    }
  }

  /// The events of the link itself; every other name a timeline waits for is
  /// one of the model's firmware events.
  static let linkEventNames = ["connected", "disconnected", "subscribed"]

  private let listeners = Mutex<[AsyncStream<Event>.Continuation]>([])

  /// A new stream of events from now on; it finishes at the next `finish()`.
  func events() -> AsyncStream<Event> {
    let (stream, continuation) = AsyncStream<Event>.makeStream()
    listeners.withLock { $0.append(continuation) }
    return stream
  }

  /// Passes `event` on to every listener, and forgets those that stopped
  /// listening (a timeline event that has fired).
  func report(_ event: Event) {
    listeners.withLock { listeners in
      listeners.removeAll { listener in
        if case .terminated = listener.yield(event) { return true }
        return false
      }
    }
  }

  /// Ends every stream given out so far.
  func finish() {
    let ended = listeners.withLock { listeners in
      defer { listeners = [] }
      return listeners
    }
    for listener in ended { listener.finish() }
  }
}
