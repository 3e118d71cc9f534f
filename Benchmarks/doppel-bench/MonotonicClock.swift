#if canImport(Glibc)
  import Glibc
#endif

/// `CLOCK_MONOTONIC` in nanoseconds, the clock Python's `time.perf_counter_ns`
/// reads on Linux, so that both sides of a comparison time the same way.
enum MonotonicClock {
  static func nanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
  }
}
