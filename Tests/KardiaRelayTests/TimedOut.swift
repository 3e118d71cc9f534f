/// A step of a test that took longer than it may.
struct TimedOut: Error, CustomStringConvertible {
  var what: String
  var limit: Duration

  var description: String { "\(what) took longer than \(limit)" }

  /// Runs `body`, throwing `TimedOut` (and cancelling it) if it takes longer than `limit`.
  static func within<T: Sendable>(
    _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
      group.addTask { try await body() }
      group.addTask {
        try await Task.sleep(for: limit)
        return nil
      }
      defer { group.cancelAll() }
      guard let result = try await group.next(), let value = result else {
        throw TimedOut(what: what, limit: limit)
      }
      return value
    }
  }
}
