import Synchronization

/// Waiting for work with a wall-time limit that holds in a task that is
/// already cancelled (a client winding down at the end of a run), and that
/// never waits for work that ignores cancellation.
enum WallTimeLimit {
  /// The work did not finish within the limit.
  struct Exceeded: Error {}

  /// Runs `body` in a task of its own and returns its result, or throws
  /// `Exceeded` after `limit` (cancelling the task, not waiting for it).
  static func run<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = FirstOutcome<T>()
    let work = Task {
      do {
        outcome.settle(.success(try await body()))
      } catch {
        outcome.settle(.failure(error))
      }
    }
    let timer = Task {
      try? await Task.sleep(for: limit)
      outcome.settle(.failure(Exceeded()))
    }
    defer {
      work.cancel()
      timer.cancel()
    }
    return try await outcome.value()
  }
}

/// The first of several outcomes, handed to one waiter.
private final class FirstOutcome<T: Sendable>: Sendable {
  private struct State {
    var outcome: Result<T, any Error>?
    var waiter: CheckedContinuation<T, any Error>?
  }

  private let state = Mutex(State())

  func settle(_ outcome: Result<T, any Error>) {
    let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
      guard state.outcome == nil else { return nil }
      state.outcome = outcome
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(with: outcome)
  }

  func value() async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      let outcome = state.withLock { state -> Result<T, any Error>? in
        if state.outcome == nil { state.waiter = continuation }
        return state.outcome
      }
      if let outcome { continuation.resume(with: outcome) }
    }
  }
}
