import Synchronization

/// A step of a test that took longer than it may.
struct TimedOut: Error, CustomStringConvertible {
  var what: String
  var limit: Duration

  var description: String { "\(what) took longer than \(limit)" }

  /// Runs `body`, throwing `TimedOut` if it takes longer than `limit`. The
  /// body is cancelled then, but not waited for: a step that ignores
  /// cancellation fails the test instead of hanging it.
  static func within<T: Sendable>(
    _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    let race = Race<T>()
    let work = Task {
      do {
        race.finish(.success(try await body()))
      } catch {
        race.finish(.failure(error))
      }
    }
    let timer = Task {
      try? await Task.sleep(for: limit)
      race.finish(.failure(TimedOut(what: what, limit: limit)))
    }
    defer {
      work.cancel()
      timer.cancel()
    }
    return try await withTaskCancellationHandler {
      try await race.value()
    } onCancel: {
      race.finish(.failure(CancellationError()))
    }
  }
}

/// The first of several outcomes, handed to one waiter.
private final class Race<T: Sendable>: Sendable {
  private struct State {
    var outcome: Result<T, any Error>?
    var waiter: CheckedContinuation<T, any Error>?
  }

  private let state = Mutex(State())

  /// Settles the race if it is not settled yet.
  func finish(_ outcome: Result<T, any Error>) {
    let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
      guard state.outcome == nil else { return nil }
      state.outcome = outcome
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(with: outcome)
  }

  /// Waits for the first outcome.
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
