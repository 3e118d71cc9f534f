/// A connection's thread as a task executor (``DBusConnection/taskExecutor``):
/// a task that prefers it runs its nonisolated code on the thread, between the
/// connection's own jobs, and a reply that resumes such a task does so in the
/// turn that read it, with no other thread woken.
///
/// It is an object of its own, not the thread's serial executor, so that
/// each job runs as what it is: a task's job as a task executor's
/// (`runSynchronously(on:)` with this executor), never as isolated to the
/// connection's actor. A default actor that such a task calls runs its job
/// here as well, under its own isolation. It holds the thread, which
/// therefore runs as long as any task prefers it.
final class DBusThreadTaskExecutor: TaskExecutor, @unchecked Sendable {
  let thread: DBusEventThread

  init(thread: DBusEventThread) { self.thread = thread }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    thread.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
  }
}
