import CDBus
import Logging

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// libdbus's watches and timeouts of one connection, driven by the
/// connection's ``DBusEventThread``: on each turn the thread polls the
/// enabled watches' sockets, hands what is ready to libdbus, fires the
/// timeouts that are due, and dispatches the messages read (which runs the
/// connection's filter and pending-call callbacks).
///
/// Confined to the thread: every method runs there, and so does every
/// libdbus callback it installs. That confinement is what `@unchecked
/// Sendable` states.
final class LibDBusEventLoop: @unchecked Sendable {
  let connection: OpaquePointer
  private let thread: DBusEventThread.Core
  /// The watches libdbus added, in the order it added them.
  private var watches: [OpaquePointer] = []
  /// Watches whose descriptor `poll` found invalid: left out from then on
  /// (polling them again would return at once, every turn).
  private var invalid: Set<OpaquePointer> = []
  /// The enabled timeouts and when each is next due.
  private var timeouts: [OpaquePointer: ContinuousClock.Instant] = [:]
  private var stopped = false

  init(connection: OpaquePointer, thread: DBusEventThread) {
    self.connection = connection
    self.thread = thread.core
  }

  /// Installs the watch, timeout and dispatch-status callbacks, and joins
  /// the thread's loop (on the thread).
  func start() throws(DBusError) {
    let watchData = Unmanaged.passRetained(self).toOpaque()
    let watchesSet = dbus_connection_set_watch_functions(
      connection,
      { watch, data in LibDBusEventLoop.from(data).add(watch: watch) },
      { watch, data in LibDBusEventLoop.from(data).remove(watch: watch) },
      { _, _ in },  // enabled or not is read on every turn
      watchData, { data in Unmanaged<LibDBusEventLoop>.fromOpaque(data!).release() })
    let timeoutData = Unmanaged.passRetained(self).toOpaque()
    let timeoutsSet = dbus_connection_set_timeout_functions(
      connection,
      { timeout, data in LibDBusEventLoop.from(data).add(timeout: timeout) },
      { timeout, data in LibDBusEventLoop.from(data).remove(timeout: timeout) },
      { timeout, data in LibDBusEventLoop.from(data).toggle(timeout: timeout) },
      timeoutData, { data in Unmanaged<LibDBusEventLoop>.fromOpaque(data!).release() })
    guard watchesSet != 0, timeoutsSet != 0 else {
      throw DBusError(name: DBusError.Name.noMemory, message: "out of memory installing the event loop")
    }
    thread.loop = self
  }

  /// Removes every watch and timeout; libdbus releases its references to the loop.
  func stop() {
    guard !stopped else { return }
    stopped = true
    dbus_connection_set_watch_functions(connection, nil, nil, nil, nil, nil)
    dbus_connection_set_timeout_functions(connection, nil, nil, nil, nil, nil)
    watches.removeAll()
    timeouts.removeAll()
    if thread.loop === self { thread.loop = nil }
  }

  private static func from(_ data: UnsafeMutableRawPointer?) -> LibDBusEventLoop {
    Unmanaged<LibDBusEventLoop>.fromOpaque(data!).takeUnretainedValue()
  }

  /// Dispatches every message read so far. Never from inside a libdbus call:
  /// the thread calls it between jobs.
  func dispatchAll() {
    while !stopped, dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
  }

  // MARK: Watches

  /// Appends a `pollfd` for each enabled watch, and the watch to `watched`.
  func collectDescriptors(into descriptors: inout [pollfd], watches watched: inout [OpaquePointer]) {
    for watch in watches where dbus_watch_get_enabled(watch) != 0 && !invalid.contains(watch) {
      let fd = dbus_watch_get_unix_fd(watch)
      guard fd >= 0 else { continue }
      let flags = dbus_watch_get_flags(watch)
      var events: Int16 = 0
      if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
      if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
      descriptors.append(pollfd(fd: fd, events: events, revents: 0))
      watched.append(watch)
    }
  }

  /// Hands a watch's readiness to libdbus (if libdbus still has the watch:
  /// handling one may remove and free another).
  func handle(_ watch: OpaquePointer, revents: Int16) {
    guard !stopped, watches.contains(watch), dbus_watch_get_enabled(watch) != 0 else { return }
    if revents & Int16(POLLNVAL) != 0 {
      Logger.dbus.error(
        "a D-Bus connection's socket is no longer open: it is left out of the poll",
        metadata: ["fd": "\(dbus_watch_get_unix_fd(watch))"])
      invalid.insert(watch)
      return
    }
    var condition: UInt32 = 0
    if revents & Int16(POLLIN) != 0 { condition |= DBUS_WATCH_READABLE.rawValue }
    if revents & Int16(POLLOUT) != 0 { condition |= DBUS_WATCH_WRITABLE.rawValue }
    if revents & Int16(POLLHUP) != 0 { condition |= DBUS_WATCH_HANGUP.rawValue }
    if revents & Int16(POLLERR) != 0 { condition |= DBUS_WATCH_ERROR.rawValue }
    guard condition != 0 else { return }
    dbus_watch_handle(watch, condition)
  }

  private func add(watch: OpaquePointer?) -> dbus_bool_t {
    guard let watch else { return 0 }
    watches.append(watch)
    return 1
  }

  private func remove(watch: OpaquePointer?) {
    guard let watch else { return }
    watches.removeAll { $0 == watch }
    invalid.remove(watch)
  }

  // MARK: Timeouts

  /// How long `poll` may wait before the next timeout is due: -1 for none.
  func millisecondsToNextTimeout() -> Int32 {
    guard let next = timeouts.values.min() else { return -1 }
    let left = ContinuousClock.now.duration(to: next)
    guard left > .zero else { return 0 }
    let (seconds, attoseconds) = left.components
    return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
  }

  /// Hands each due timeout to libdbus, which may remove or re-arm it.
  func fireDueTimeouts() {
    guard !timeouts.isEmpty else { return }
    let now = ContinuousClock.now
    for (timeout, due) in timeouts where due <= now {
      guard !stopped, timeouts[timeout] != nil else { continue }
      timeouts[timeout] = now + Self.interval(of: timeout)
      dbus_timeout_handle(timeout)
    }
  }

  private static func interval(of timeout: OpaquePointer) -> Duration {
    .milliseconds(Int(dbus_timeout_get_interval(timeout)))
  }

  private func add(timeout: OpaquePointer?) -> dbus_bool_t {
    guard let timeout else { return 0 }
    rearm(timeout)
    return 1
  }

  private func remove(timeout: OpaquePointer?) {
    guard let timeout else { return }
    timeouts[timeout] = nil
  }

  private func toggle(timeout: OpaquePointer?) {
    guard let timeout else { return }
    rearm(timeout)
  }

  private func rearm(_ timeout: OpaquePointer) {
    timeouts[timeout] = dbus_timeout_get_enabled(timeout) != 0 ? ContinuousClock.now + Self.interval(of: timeout) : nil
  }
}
