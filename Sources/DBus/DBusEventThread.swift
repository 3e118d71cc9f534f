import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The one thread that owns a ``DBusConnection``: a serial executor whose
/// thread runs the connection's jobs (the actor's methods, libdbus's
/// callbacks) and, between them, waits in `poll(2)` on the connection's
/// socket and on a pipe that other threads write to hand it work.
///
/// A reply read from the socket is dispatched, and the waiting caller
/// resumed, on the thread that read it: no hand-over between a watcher
/// thread, a dispatch queue and the connection's executor. `poll` looks at
/// every enabled watch on every turn (level-triggered), so a readiness event
/// cannot be lost between turns; work handed over while the thread is
/// about to sleep finds the `sleeping` flag set under the same lock and
/// writes the pipe.
///
/// Nonisolated tasks may run on the thread too, through
/// ``DBusThreadTaskExecutor``.
///
/// The thread ends once nothing refers to the executor any more (the
/// connection and its task executor are gone and no job is queued), after
/// running what was queued.
final class DBusEventThread: SerialExecutor, @unchecked Sendable {
  /// The thread's side: its state and its loop.
  final class Core: @unchecked Sendable {
    struct Inbox {
      var jobs: [@Sendable () -> Void] = []
      var sleeping = false
      var stopping = false
      /// Jobs submitted from another thread (only these can wake it).
      var handOvers = 0
    }

    /// The key under which a connection's thread keeps its core, so that
    /// `isCurrent` reads it from the thread itself. (`pthread_self` is
    /// declared `const`, so the optimiser may reuse its result across a
    /// suspension point, after which the task can be on another thread.)
    static let key: pthread_key_t = {
      var key = pthread_key_t()
      precondition(pthread_key_create(&key, nil) == 0, "cannot create the D-Bus threads' key")
      return key
    }()

    /// Whether the caller runs on this core's thread.
    var isCurrent: Bool { pthread_getspecific(Self.key) == Unmanaged.passUnretained(self).toOpaque() }

    let inbox = Mutex(Inbox())
    /// A pipe written to wake the thread from `poll` (`wake`), read
    /// (emptied) by the thread (`woken`).
    let woken: Int32
    let wake: Int32
    /// The connection's watches and timeouts; set and used on the thread only.
    var loop: LibDBusEventLoop?

    init() throws(DBusError) {
      var ends: [Int32] = [-1, -1]
      guard pipe(&ends) == 0 else {
        throw DBusError(name: DBusError.Name.noMemory, message: "pipe failed: \(String(cString: strerror(errno)))")
      }
      for end in ends {
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      }
      (woken, wake) = (ends[0], ends[1])
    }

    /// The pipe closes with the core: after the thread's loop and after the
    /// last `stop()` or `submit()`, which may still write to it.
    deinit {
      Glibc.close(woken)
      Glibc.close(wake)
    }

    /// Queues `job` and wakes the thread if it sleeps.
    func submit(_ job: @escaping @Sendable () -> Void) {
      let fromElsewhere = !isCurrent
      let sleeping = inbox.withLock { inbox in
        inbox.jobs.append(job)
        if fromElsewhere { inbox.handOvers += 1 }
        return inbox.sleeping
      }
      if sleeping { signal() }
    }

    /// How many jobs have been submitted from other threads (each may wake it).
    var handOvers: Int { inbox.withLock { $0.handOvers } }

    func stop() {
      let sleeping = inbox.withLock { inbox in
        inbox.stopping = true
        return inbox.sleeping
      }
      if sleeping { signal() }
    }

    /// One byte is enough; a full pipe already wakes the thread.
    private func signal() {
      var one: UInt8 = 1
      _ = Glibc.write(wake, &one, 1)
    }

    /// Runs what is queued; returns whether there was anything, and whether
    /// the thread is asked to stop.
    private func runQueuedJobs() -> (ran: Bool, stopping: Bool) {
      // Taken whole (swapped out): copying and then emptying the inbox's
      // array would allocate a new buffer on every turn.
      let (jobs, stopping) = inbox.withLock { inbox in
        var taken: [@Sendable () -> Void] = []
        swap(&taken, &inbox.jobs)
        return (taken, inbox.stopping)
      }
      for job in jobs { job() }
      return (!jobs.isEmpty, stopping)
    }

    /// The thread's loop: the queued jobs, libdbus's dispatch, then `poll`
    /// until a socket, a timeout or the pipe calls.
    func run() {
      var descriptors: [pollfd] = []
      var watched: [OpaquePointer] = []
      while true {
        // The jobs are let go of before `poll`: a job may hold the last
        // reference to the executor, whose end is what ends the thread.
        let (ran, stopping) = runQueuedJobs()
        if stopping && !ran { break }
        loop?.dispatchAll()

        descriptors.removeAll(keepingCapacity: true)
        watched.removeAll(keepingCapacity: true)
        descriptors.append(pollfd(fd: woken, events: Int16(POLLIN), revents: 0))
        loop?.collectDescriptors(into: &descriptors, watches: &watched)
        let timeout = loop?.millisecondsToNextTimeout() ?? -1
        let sleeps = inbox.withLock { inbox in
          guard inbox.jobs.isEmpty, !inbox.stopping else { return false }
          inbox.sleeping = true
          return true
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), sleeps ? timeout : 0)
        if sleeps { inbox.withLock { $0.sleeping = false } }
        if ready > 0 {
          if descriptors[0].revents != 0 {
            var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            while withUnsafeMutableBytes(of: &bytes, { Glibc.read(woken, $0.baseAddress, $0.count) }) > 0 {}
          }
          for index in watched.indices where descriptors[index + 1].revents != 0 {
            loop?.handle(watched[index], revents: descriptors[index + 1].revents)
          }
        }
        loop?.fireDueTimeouts()
      }
      loop = nil
    }
  }

  let core: Core

  /// Starts the thread.
  init() throws(DBusError) {
    core = try Core()
    let box = Unmanaged.passRetained(core).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let created = pthread_create(
      &thread, &attributes,
      { data in
        pthread_setspecific(Core.key, data)
        let core = Unmanaged<Core>.fromOpaque(data!).takeRetainedValue()
        core.run()
        pthread_setspecific(Core.key, nil)
        return nil
      }, box)
    guard created == 0 else {
      Unmanaged<Core>.fromOpaque(box).release()
      throw DBusError(name: DBusError.Name.noMemory, message: "cannot start the connection's thread (\(created))")
    }
  }

  deinit { core.stop() }

  /// Runs `job` on the thread, after what is queued before it.
  func async(_ job: @escaping @Sendable () -> Void) { core.submit(job) }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    core.submit { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
  }

  /// Whether the caller runs on the thread.
  var isCurrent: Bool { core.isCurrent }

  func checkIsolated() {
    precondition(isCurrent, "not on the D-Bus connection's thread")
  }
}
