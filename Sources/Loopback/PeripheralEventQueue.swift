import GATT

/// Delivers a hosted model's callbacks one at a time, in the order they were
/// enqueued, each awaited before the next: the order of events on the link.
final class PeripheralEventQueue: Sendable {
  typealias Job = @Sendable () async -> Void

  private let continuation: AsyncStream<Job>.Continuation

  init() {
    let (jobs, continuation) = AsyncStream.makeStream(of: Job.self)
    self.continuation = continuation
    Task(executorPreference: Task.currentExecutorPreference) {
      for await job in jobs {
        await job()
      }
    }
  }

  /// Adds a job. Callers enqueue while holding the air's lock, so the queue's
  /// order is the order in which the air changed state.
  func enqueue(_ job: @escaping Job) {
    continuation.yield(job)
  }

  /// Runs the jobs already enqueued, then stops.
  func finish() {
    continuation.finish()
  }
}
