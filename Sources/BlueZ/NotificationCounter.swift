import Synchronization

/// Counts notifications as they pass one end of a link, from any thread:
/// a hosted device's sends, or what a central's subscriptions received.
/// With both ends in one process (`doppel e2e`), the two counts say whether
/// everything sent has arrived.
public final class NotificationCounter: Sendable {
  private let count = Atomic<Int>(0)

  public init() {}

  /// The notifications counted so far.
  public var value: Int { count.load(ordering: .acquiring) }

  /// Counts one notification.
  public func increment() {
    count.add(1, ordering: .releasing)
  }
}
