import Glibc

/// `CLOCK_MONOTONIC` in microseconds: the one clock both peripherals (Swift
/// and Python's `time.monotonic_ns`) and the client read, so that latency is
/// receipt time minus the send time carried in the notification.
enum MonotonicTime {
  static func microseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
  }
}
