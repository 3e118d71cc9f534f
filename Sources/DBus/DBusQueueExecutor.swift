import Dispatch

/// A serial executor backed by a dispatch queue. A ``DBusConnection`` runs on
/// it, and so do all of libdbus's callbacks for that connection, so that
/// every libdbus call for the connection happens on one queue.
final class DBusQueueExecutor: SerialExecutor {
  let queue: DispatchQueue

  init(label: String) {
    queue = DispatchQueue(label: label)
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedSerialExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }

  func checkIsolated() {
    dispatchPrecondition(condition: .onQueue(queue))
  }
}
