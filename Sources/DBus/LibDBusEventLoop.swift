import CDBus
import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Drives one libdbus connection from a dispatch queue: libdbus's watches
/// become dispatch read/write sources, its timeouts dispatch timers, and
/// whenever data is queued, messages are dispatched (which runs the
/// connection's filter and pending-call callbacks).
///
/// Confined to `queue`: every method runs there, and so does every libdbus
/// callback it installs. That confinement is what `@unchecked Sendable` states.
final class LibDBusEventLoop: @unchecked Sendable {
  let connection: OpaquePointer
  let queue: DispatchQueue
  private var sources: [OpaquePointer: [DispatchSourceProtocol]] = [:]
  private var timers: [OpaquePointer: DispatchSourceTimer] = [:]
  private var watches: Set<OpaquePointer> = []
  private var dispatchScheduled = false
  private var stopped = false
  private var sweeper: DispatchSourceTimer?
  /// How often the sweep looks at the sockets itself (see `sweep()`).
  static let sweepInterval = DispatchTimeInterval.milliseconds(50)

  init(connection: OpaquePointer, queue: DispatchQueue) {
    self.connection = connection
    self.queue = queue
  }

  /// Installs the watch, timeout and dispatch-status callbacks.
  func start() throws(DBusError) {
    let watchData = Unmanaged.passRetained(self).toOpaque()
    let watchesSet = dbus_connection_set_watch_functions(
      connection,
      { watch, data in LibDBusEventLoop.from(data).add(watch: watch) },
      { watch, data in LibDBusEventLoop.from(data).remove(watch: watch) },
      { watch, data in LibDBusEventLoop.from(data).toggle(watch: watch) },
      watchData, { data in Unmanaged<LibDBusEventLoop>.fromOpaque(data!).release() })
    let timeoutData = Unmanaged.passRetained(self).toOpaque()
    let timeoutsSet = dbus_connection_set_timeout_functions(
      connection,
      { timeout, data in LibDBusEventLoop.from(data).add(timeout: timeout) },
      { timeout, data in LibDBusEventLoop.from(data).remove(timeout: timeout) },
      { timeout, data in LibDBusEventLoop.from(data).toggle(timeout: timeout) },
      timeoutData, { data in Unmanaged<LibDBusEventLoop>.fromOpaque(data!).release() })
    dbus_connection_set_dispatch_status_function(
      connection,
      { _, status, data in
        if status == DBUS_DISPATCH_DATA_REMAINS { LibDBusEventLoop.from(data).scheduleDispatch() }
      },
      Unmanaged.passRetained(self).toOpaque(), { data in Unmanaged<LibDBusEventLoop>.fromOpaque(data!).release() })
    guard watchesSet != 0, timeoutsSet != 0 else {
      throw DBusError(name: DBusError.Name.noMemory, message: "out of memory installing the event loop")
    }
    scheduleDispatch()
    let sweeper = DispatchSource.makeTimerSource(queue: queue)
    sweeper.schedule(deadline: .now() + Self.sweepInterval, repeating: Self.sweepInterval)
    sweeper.setEventHandler { [unowned self] in sweep() }
    self.sweeper = sweeper
    sweeper.resume()
  }

  /// A safety net under the dispatch sources: libdbus toggles its watches
  /// often, and each toggle replaces a dispatch source on the same socket;
  /// under heavy load a readiness event was seen to get lost in that
  /// hand-over (a reply then waited out the 25 s call timeout). Every
  /// `sweepInterval`, poll each enabled watch's socket without blocking and
  /// handle what is ready, so a lost event costs at most that long.
  private func sweep() {
    guard !stopped else { return }
    var handled = false
    for watch in Array(watches) where watches.contains(watch) && dbus_watch_get_enabled(watch) != 0 {
      // Handling one watch may remove (and free) another: hence the check.
      let fd = dbus_watch_get_unix_fd(watch)
      guard fd >= 0 else { continue }
      let flags = dbus_watch_get_flags(watch)
      var events: Int16 = 0
      if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
      if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
      var descriptor = pollfd(fd: fd, events: events, revents: 0)
      guard poll(&descriptor, 1, 0) > 0 else { continue }
      var condition: UInt32 = 0
      if descriptor.revents & Int16(POLLIN) != 0 { condition |= DBUS_WATCH_READABLE.rawValue }
      if descriptor.revents & Int16(POLLOUT) != 0 { condition |= DBUS_WATCH_WRITABLE.rawValue }
      if descriptor.revents & Int16(POLLHUP) != 0 { condition |= DBUS_WATCH_HANGUP.rawValue }
      if descriptor.revents & Int16(POLLERR) != 0 { condition |= DBUS_WATCH_ERROR.rawValue }
      guard condition != 0 else { continue }
      dbus_watch_handle(watch, condition)
      handled = true
      if stopped { return }
    }
    if handled || dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS { dispatchAll() }
  }

  /// Removes every source; libdbus releases its references to the loop.
  func stop() {
    guard !stopped else { return }
    stopped = true
    dbus_connection_set_watch_functions(connection, nil, nil, nil, nil, nil)
    dbus_connection_set_timeout_functions(connection, nil, nil, nil, nil, nil)
    dbus_connection_set_dispatch_status_function(connection, nil, nil, nil)
    for source in sources.values.joined() { source.cancel() }
    for timer in timers.values { timer.cancel() }
    sweeper?.cancel()
    sweeper = nil
    watches.removeAll()
    sources.removeAll()
    timers.removeAll()
  }

  private static func from(_ data: UnsafeMutableRawPointer?) -> LibDBusEventLoop {
    Unmanaged<LibDBusEventLoop>.fromOpaque(data!).takeUnretainedValue()
  }

  /// Dispatches on a later turn of the queue: never from inside a libdbus call.
  func scheduleDispatch() {
    guard !dispatchScheduled, !stopped else { return }
    dispatchScheduled = true
    queue.async { [self] in
      dispatchScheduled = false
      dispatchAll()
    }
  }

  private func dispatchAll() {
    while !stopped, dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
  }

  // MARK: Watches

  private func add(watch: OpaquePointer?) -> dbus_bool_t {
    guard let watch else { return 0 }
    watches.insert(watch)
    rebuild(watch)
    return 1
  }

  private func remove(watch: OpaquePointer?) {
    guard let watch else { return }
    watches.remove(watch)
    for source in sources.removeValue(forKey: watch) ?? [] { source.cancel() }
  }

  private func toggle(watch: OpaquePointer?) {
    guard let watch else { return }
    rebuild(watch)
  }

  private func rebuild(_ watch: OpaquePointer) {
    for source in sources.removeValue(forKey: watch) ?? [] { source.cancel() }
    guard dbus_watch_get_enabled(watch) != 0, !stopped else { return }
    let fd = dbus_watch_get_unix_fd(watch)
    guard fd >= 0 else { return }
    let flags = dbus_watch_get_flags(watch)
    var group: [DispatchSourceProtocol] = []
    if flags & DBUS_WATCH_READABLE.rawValue != 0 {
      let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
      source.setEventHandler { [unowned self] in handle(watch, DBUS_WATCH_READABLE.rawValue) }
      group.append(source)
    }
    if flags & DBUS_WATCH_WRITABLE.rawValue != 0 {
      let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
      source.setEventHandler { [unowned self] in handle(watch, DBUS_WATCH_WRITABLE.rawValue) }
      group.append(source)
    }
    sources[watch] = group
    for source in group { source.resume() }
  }

  private func handle(_ watch: OpaquePointer, _ condition: UInt32) {
    guard !stopped, sources[watch] != nil else { return }
    dbus_watch_handle(watch, condition)
    dispatchAll()
  }

  // MARK: Timeouts

  private func add(timeout: OpaquePointer?) -> dbus_bool_t {
    guard let timeout else { return 0 }
    rebuild(timeout: timeout)
    return 1
  }

  private func remove(timeout: OpaquePointer?) {
    guard let timeout else { return }
    timers.removeValue(forKey: timeout)?.cancel()
  }

  private func toggle(timeout: OpaquePointer?) {
    guard let timeout else { return }
    rebuild(timeout: timeout)
  }

  private func rebuild(timeout: OpaquePointer) {
    timers.removeValue(forKey: timeout)?.cancel()
    guard dbus_timeout_get_enabled(timeout) != 0, !stopped else { return }
    let interval = DispatchTimeInterval.milliseconds(Int(dbus_timeout_get_interval(timeout)))
    let timer = DispatchSource.makeTimerSource(queue: queue)
    timer.schedule(deadline: .now() + interval, repeating: interval)
    timer.setEventHandler { [unowned self] in
      guard !stopped, timers[timeout] != nil else { return }
      dbus_timeout_handle(timeout)
      dispatchAll()
    }
    timers[timeout] = timer
    timer.resume()
  }
}
