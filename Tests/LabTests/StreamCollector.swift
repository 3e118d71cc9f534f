import Synchronization

/// Collects what a client's stream yields, so a lab test can wait for what
/// it needs (bounded) instead of sleeping a fixed time and sampling once: a
/// loaded lab takes longer to connect and subscribe, and a fixed sleep then
/// leaves too little data.
final class StreamCollector<Value: Sendable>: Sendable {
  private final class Storage: Sendable {
    let values = Mutex<[Value]>([])
  }
  private let storage = Storage()
  private let task: Task<Void, Never>

  init(_ stream: AsyncStream<Value>) {
    let storage = self.storage
    task = Task {
      for await value in stream { storage.values.withLock { $0.append(value) } }
    }
  }

  /// What arrived so far.
  var values: [Value] { storage.values.withLock { $0 } }

  /// Waits until what arrived satisfies `condition`, for at most `limit`;
  /// returns whether it did.
  @discardableResult
  func wait(within limit: Duration, until condition: ([Value]) -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition(values) {
      guard ContinuousClock.now < deadline else { return false }
      try await Task.sleep(for: .milliseconds(50))
    }
    return true
  }

  /// Everything, once the stream has ended.
  var all: [Value] {
    get async {
      await task.value
      return values
    }
  }
}
