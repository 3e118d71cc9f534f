extension Task where Success == Never, Failure == Never {
  /// The task executor the current task prefers, or `nil` (none, or not in a task).
  ///
  /// Child tasks inherit a preference; unstructured tasks do not. Start them
  /// with `Task(executorPreference: Task.currentExecutorPreference)` to keep
  /// it, as everything in a loopback run does: there it is the run's
  /// `LoopbackExecutor`, and elsewhere `nil`, which is `Task { }`.
  public static var currentExecutorPreference: (any TaskExecutor)? {
    withUnsafeCurrentTask { $0?.unownedTaskExecutor?.asTaskExecutor() }
  }
}
