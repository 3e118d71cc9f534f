import Synchronization

/// The methods a stand-in for bluetoothd was called with, in order
/// (`RegisterApplication`, `Disconnect`, …), and the object path each was
/// given, if any, for tests to check.
final class MethodCallLog: Sendable {
  private let calls = Mutex<[(name: String, path: String?)]>([])
  var all: [String] { calls.withLock { $0.map(\.name) } }
  /// Every call with the object path it was given (`nil`: none).
  var withPaths: [(name: String, path: String?)] { calls.withLock { $0 } }
  func append(_ name: String, path: String? = nil) { calls.withLock { $0.append((name, path)) } }
  /// How many times `name` was called.
  func count(_ name: String) -> Int { all.filter { $0 == name }.count }
}
