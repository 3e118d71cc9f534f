import Synchronization

/// The methods a stand-in for bluetoothd was called with, in order
/// (`RegisterApplication`, `Disconnect`, …), for tests to check.
final class MethodCallLog: Sendable {
  private let names = Mutex<[String]>([])
  var all: [String] { names.withLock { $0 } }
  func append(_ name: String) { names.withLock { $0.append(name) } }
  /// How many times `name` was called.
  func count(_ name: String) -> Int { all.filter { $0 == name }.count }
}
