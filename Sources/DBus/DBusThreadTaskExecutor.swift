/// A connection's thread as a task executor (``DBusConnection/taskExecutor``):
/// a task that prefers it runs its nonisolated code on the thread, between the
/// connection's own jobs, and a reply resumes such a task on the thread that
/// read it, with no other thread woken.
///
/// It is an object of its own, not the thread's serial executor, so that
/// each job runs as what it is: a task's job as a task executor's
/// (`runSynchronously(on:)` with this executor), never as isolated to the
/// connection's actor. (A default actor that such a task calls while the
/// actor is idle may run its jobs here too, under its own isolation.) It
/// holds the thread, which therefore runs as long as anything refers to it.
///
/// For nonisolated code only: a loop isolated to the connection that also
/// prefers its thread is moved between the two executors at every
/// suspension, a job on the same thread each time.
final class DBusThreadTaskExecutor: TaskExecutor {
  let thread: DBusEventThread

  init(thread: DBusEventThread) { self.thread = thread }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    thread.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
  }
}
