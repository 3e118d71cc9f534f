import DBus
import Synchronization

/// The advertisements a stand-in for bluetoothd has registered, and how many
/// were registered after each `RegisterAdvertisement` and
/// `UnregisterAdvertisement` that took effect, for tests to check.
final class AdvertisementLog: Sendable {
  private let state = Mutex<(registered: Set<ObjectPath>, counts: [Int])>(([], []))

  /// The advertisements registered now.
  var registered: Set<ObjectPath> { state.withLock { $0.registered } }
  /// How many advertisements were registered after each change, in order.
  var counts: [Int] { state.withLock { $0.counts } }

  /// Registers `path`; false when it is registered already.
  func register(_ path: ObjectPath) -> Bool {
    state.withLock {
      guard $0.registered.insert(path).inserted else { return false }
      $0.counts.append($0.registered.count)
      return true
    }
  }

  /// Unregisters `path`; false when it is not registered.
  func unregister(_ path: ObjectPath) -> Bool {
    state.withLock {
      guard $0.registered.remove(path) != nil else { return false }
      $0.counts.append($0.registered.count)
      return true
    }
  }
}
