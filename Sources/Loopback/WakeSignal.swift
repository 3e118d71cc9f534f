import GATT

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Wakes one waiting thread: `wake()` before `wait` makes the next `wait`
/// return at once, so a wake between a check and the wait is not lost.
final class WakeSignal: @unchecked Sendable {
  // The pthread objects never move: they live in their own allocations.
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  private var woken = false

  init() {
    pthread_mutex_init(mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    #if canImport(Glibc)
      pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    #endif
    pthread_cond_init(condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  func wake() {
    pthread_mutex_lock(mutex)
    woken = true
    pthread_cond_signal(condition)
    pthread_mutex_unlock(mutex)
  }

  /// Waits for `wake()`, or until `deadline` (wall time) when given.
  func wait(until deadline: ContinuousClock.Instant?) {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    guard let deadline else {
      while !woken { pthread_cond_wait(condition, mutex) }
      woken = false
      return
    }
    let remaining = ContinuousClock.now.duration(to: deadline)
    guard remaining > .zero else {
      woken = false
      return
    }
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    let (seconds, attoseconds) = remaining.components
    var nanoseconds = Int(time.tv_nsec) + Int(attoseconds / 1_000_000_000)
    var wholeSeconds = Int(time.tv_sec) + Int(seconds)
    if nanoseconds >= 1_000_000_000 {
      nanoseconds -= 1_000_000_000
      wholeSeconds += 1
    }
    var until = timespec(tv_sec: wholeSeconds, tv_nsec: nanoseconds)
    while !woken {
      if pthread_cond_timedwait(condition, mutex, &until) == ETIMEDOUT { break }
    }
    woken = false
  }
}
