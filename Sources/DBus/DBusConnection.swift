import CDBus
import Logging
import Synchronization

/// A connection to a D-Bus message bus.
///
/// The actor runs on the connection's own thread (``DBusEventThread``), and
/// so do all of libdbus's callbacks for it: every libdbus call for this
/// connection is made from that one thread, which also reads the socket and
/// dispatches what arrives. Nothing blocks on it: calls wait for their
/// replies asynchronously, and cancelling the waiting task cancels the call.
///
/// ```swift
/// let bus = try await DBusConnection.connect(to: .system)
/// let reply = try await bus.call(
///   destination: "org.bluez", path: ObjectPath("/org/bluez/hci0"),
///   interface: "org.freedesktop.DBus.Properties", method: "Get",
///   arguments: [.string("org.bluez.Adapter1"), .string("Powered")])
/// ```
public actor DBusConnection {
  nonisolated let executor: DBusEventThread
  public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
  /// The connection's thread as a task executor. Nonisolated code that
  /// awaits many calls on this connection runs cheapest inside
  /// `withTaskExecutorPreference(connection.taskExecutor) { … }`: its calls
  /// are sent from the thread at once, and each reply resumes it on the
  /// thread that read the reply, with no other thread woken. (The closure
  /// keeps its caller's isolation: code isolated to an actor runs there.)
  public nonisolated let taskExecutor: any TaskExecutor

  let raw: OpaquePointer
  let loop: LibDBusEventLoop
  /// The unique name the bus gave this connection, e.g. `:1.42`.
  public nonisolated var uniqueName: String { registeredName.withLock { $0 } }
  private nonisolated let registeredName = Mutex("")
  /// The address this connection was opened to.
  public nonisolated let address: String
  var isOpen = true
  /// Whether the libdbus connection has been closed and let go of (once,
  /// by ``close()`` or `deinit`, also after the bus dropped it).
  var isReleased = false

  var tree = DBusObjectTree()
  var subscriptions: [Int: DBusSignalSubscription] = [:]
  var nextSubscriptionID = 0
  /// Current owners of the well-known names that subscriptions filter on.
  var nameOwners: [String: String] = [:]
  var trackedNames: [String: Int] = [:]
  var pendingCalls: Set<DBusPendingReply> = []

  private static let threadsInitialised: Bool = dbus_threads_init_default() != 0

  private init(raw: OpaquePointer, executor: DBusEventThread, address: String) {
    self.raw = raw
    self.executor = executor
    self.taskExecutor = DBusThreadTaskExecutor(thread: executor)
    self.address = address
    self.loop = LibDBusEventLoop(connection: raw, thread: executor)
  }

  /// Opens a connection to `bus` and registers on it (`Hello`).
  public static func connect(to bus: DBusBusAddress) async throws -> DBusConnection {
    guard threadsInitialised else {
      throw DBusError(name: DBusError.Name.noMemory, message: "dbus_threads_init_default failed")
    }
    let address = try bus.resolved()
    let executor = try DBusEventThread()
    // Opening a local socket is quick, but it is still done on the thread that
    // will own the connection, never on a caller's thread.
    let opened: Result<LibDBusPointer, DBusError> = await withCheckedContinuation { continuation in
      executor.async {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let raw = address.withCString { dbus_connection_open_private($0, &error) }
        if let raw {
          dbus_connection_set_exit_on_disconnect(raw, 0)
          continuation.resume(returning: .success(LibDBusPointer(pointer: raw)))
        } else {
          let name = error.name.map { String(cString: $0) } ?? DBusError.Name.failed
          let message = error.message.map { String(cString: $0) } ?? "cannot connect"
          continuation.resume(
            returning: .failure(DBusError(name: name, message: "cannot connect to \(bus): \(message)")))
        }
      }
    }
    let connection: DBusConnection
    do {
      connection = DBusConnection(raw: try opened.get().pointer, executor: executor, address: address)
      try await connection.start()
    } catch {
      Logger.dbus.warning("cannot connect to the bus", metadata: ["bus": "\(bus)", "error": "\(error)"])
      throw error
    }
    Logger.dbus.debug(
      "connected to the bus", metadata: ["bus": "\(bus)", "name": "\(connection.uniqueName)"])
    return connection
  }

  private func start() async throws {
    let data = Unmanaged.passRetained(DBusFilterBox(self)).toOpaque()
    guard
      dbus_connection_add_filter(
        raw, { _, message, data in DBusFilterBox.route(message, data) }, data,
        { data in Unmanaged<DBusFilterBox>.fromOpaque(data!).release() }) != 0
    else {
      Unmanaged<DBusFilterBox>.fromOpaque(data).release()
      throw DBusError(name: DBusError.Name.noMemory, message: "out of memory adding the message filter")
    }
    do {
      try loop.start()
      let hello = try DBusMessage.methodCall(
        destination: "org.freedesktop.DBus", path: ObjectPath("/org/freedesktop/DBus"),
        interface: "org.freedesktop.DBus", member: "Hello")
      let reply = try await send(hello, timeout: .seconds(25))
      guard let name = reply.body.first?.string else { throw DBusError.failed("Hello returned no unique name") }
      registeredName.withLock { $0 = name }
      _ = name.withCString { dbus_bus_set_unique_name(raw, $0) }
    } catch {
      close()
      throw error
    }
  }

  deinit {
    if !isReleased {
      let loop = self.loop
      executor.async {
        loop.stop()
        dbus_connection_close(loop.connection)
        dbus_connection_unref(loop.connection)
      }
    }
  }

  /// Closes the connection: pending calls fail with `Disconnected`, signal
  /// streams finish, exported objects disappear. Queued messages are sent
  /// first, for up to ``closingFlushLimit``.
  public func close() {
    guard !isReleased else { return }
    if isOpen {
      Logger.dbus.debug("closing the connection", metadata: ["name": "\(uniqueName)"])
      isOpen = false
      flushQueuedMessages(within: Self.closingFlushLimit)
    }
    isReleased = true
    loop.stop()
    dbus_connection_close(raw)
    connectionLost(DBusError.disconnected("the connection was closed"))
    dbus_connection_unref(raw)
  }

  /// How long ``close()`` goes on sending queued messages.
  public static let closingFlushLimit = Duration.seconds(1)

  /// Sends queued messages until none is left, the connection drops, or
  /// `limit` passes. (`dbus_connection_flush` has no bound: with the bus
  /// waiting for us to read, and our incoming queue full, it spins forever.)
  private func flushQueuedMessages(within limit: Duration) {
    let deadline = ContinuousClock.now + limit
    while dbus_connection_get_is_connected(raw) != 0, dbus_connection_has_messages_to_send(raw) != 0,
      ContinuousClock.now < deadline
    {
      _ = dbus_connection_read_write(raw, 20)
    }
    if dbus_connection_has_messages_to_send(raw) != 0 {
      Logger.dbus.warning(
        "closing the connection with messages still unsent", metadata: ["name": "\(uniqueName)", "after": "\(limit)"])
    }
  }

  /// Fails everything that waits on the connection.
  func connectionLost(_ error: DBusError) {
    isOpen = false
    for pending in pendingCalls { pending.cancel(with: error) }
    pendingCalls.removeAll()
    for subscription in subscriptions.values { subscription.deliver(.closed(error)) }
    subscriptions.removeAll()
  }

  // MARK: Sending

  /// Sends a message that expects no reply (a signal, or a call with no reply wanted).
  public func send(_ message: DBusMessage) throws(DBusError) {
    guard isOpen else { throw DBusError.disconnected() }
    let outgoing = try LibDBusMessage.make(message)
    defer { dbus_message_unref(outgoing) }
    guard dbus_connection_send(raw, outgoing, nil) != 0 else {
      throw DBusError(name: DBusError.Name.noMemory, message: "out of memory sending a message")
    }
  }

  /// Sends a method call and waits for its reply. An error reply is thrown as
  /// a ``DBusError`` with the peer's error name; cancelling the task cancels
  /// the call and throws `CancellationError`.
  ///
  /// Runs on the caller's executor (`isolation`): the call is handed to the connection's
  /// thread once, and the reply resumes the caller from there directly, with
  /// no hop back through the actor.
  ///
  /// - Parameter timeout: how long to wait; `nil` for libdbus's default (25 s).
  public func send(
    _ call: DBusMessage, timeout: Duration?, isolation: isolated (any Actor)? = #isolation
  ) async throws -> DBusMessage {
    for value in call.body { try value.validate() }
    let milliseconds: Int32 =
      timeout.map { Int32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) }
      ?? -1
    let reply = DBusPendingReply()
    return try await withTaskCancellationHandler {
      // Capturing the isolation keeps the operation on the caller's executor;
      // a closure without it would hop to the global pool first.
      _ = isolation
      return try await withCheckedThrowingContinuation(isolation: isolation) { continuation in
        let begin: @Sendable () -> Void = { [self] in
          guard reply.begin(continuation) else { return }
          assumeIsolated { connection in connection.start(call, timeout: milliseconds, answeringTo: reply) }
        }
        // On the thread already (a caller isolated to the connection): sent
        // now, in order with what the caller sent before.
        if executor.isCurrent { begin() } else { executor.async(begin) }
      }
    } onCancel: {
      executor.async { reply.cancel(with: CancellationError()) }
    }
  }

  /// Sends `call` for `reply`, which resumes its waiter with the answer.
  private func start(_ call: DBusMessage, timeout milliseconds: Int32, answeringTo reply: DBusPendingReply) {
    guard isOpen else {
      reply.cancel(with: DBusError.disconnected())
      return
    }
    let outgoing: OpaquePointer
    do {
      outgoing = try LibDBusMessage.make(call)
    } catch {
      reply.cancel(with: error)
      return
    }
    defer { dbus_message_unref(outgoing) }
    var pending: OpaquePointer?
    guard dbus_connection_send_with_reply(raw, outgoing, &pending, milliseconds) != 0, let pending else {
      reply.cancel(with: DBusError.disconnected("the connection is closed"))
      return
    }
    reply.attach(pending) { [weak self] finished in
      self?.assumeIsolated { _ = $0.pendingCalls.remove(finished) }
    }
    if reply.isWaiting { pendingCalls.insert(reply) }
  }

  /// Calls `method` and returns the reply's arguments.
  public func call(
    destination: String, path: ObjectPath, interface: String, method: String,
    arguments: [DBusValue] = [], timeout: Duration? = nil, isolation: isolated (any Actor)? = #isolation
  ) async throws -> [DBusValue] {
    let message = try DBusMessage.methodCall(
      destination: destination, path: path, interface: interface, member: method, body: arguments)
    return try await send(message, timeout: timeout, isolation: isolation).body
  }

  /// Emits a signal from one of this connection's objects.
  public func emit(
    path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
  ) throws(DBusError) {
    try send(
      DBusMessage.signal(path: path, interface: interface, member: member, body: arguments, destination: destination))
  }

  // MARK: Names

  /// What `RequestName` answered.
  public enum NameRequestResult: UInt32, Sendable {
    case primaryOwner = 1
    case inQueue = 2
    case exists = 3
    case alreadyOwner = 4
  }

  /// Requests a well-known name; throws unless this connection owns it afterwards.
  @discardableResult
  public func requestName(_ name: String, replaceExisting: Bool = false) async throws -> NameRequestResult {
    try DBusName.validateBusName(name)
    let flags: UInt32 = 0x4 | (replaceExisting ? 0x2 : 0)  // DO_NOT_QUEUE | REPLACE_EXISTING
    let reply = try await call(
      destination: "org.freedesktop.DBus", path: ObjectPath("/org/freedesktop/DBus"), interface: "org.freedesktop.DBus",
      method: "RequestName", arguments: [.string(name), .uint32(flags)])
    guard let code = reply.first?.int, let result = NameRequestResult(rawValue: UInt32(code)) else {
      throw DBusError.failed("RequestName returned \(reply)")
    }
    guard result == .primaryOwner || result == .alreadyOwner else {
      throw DBusError(name: DBusError.Name.addressInUse, message: "the name \(name) is owned by another connection")
    }
    return result
  }

  /// Releases a well-known name this connection owns.
  public func releaseName(_ name: String) async throws {
    try DBusName.validateBusName(name)
    _ = try await call(
      destination: "org.freedesktop.DBus", path: ObjectPath("/org/freedesktop/DBus"), interface: "org.freedesktop.DBus",
      method: "ReleaseName", arguments: [.string(name)])
  }

  /// The unique name owning `name`, or `nil` when it has no owner.
  public func nameOwner(of name: String) async throws -> String? {
    do {
      let reply = try await call(
        destination: "org.freedesktop.DBus", path: ObjectPath("/org/freedesktop/DBus"),
        interface: "org.freedesktop.DBus",
        method: "GetNameOwner", arguments: [.string(name)])
      return reply.first?.string
    } catch let error as DBusError where error.name == DBusError.Name.nameHasNoOwner {
      return nil
    }
  }
}

/// A libdbus pointer handed between closures that all run on the connection's
/// thread (libdbus objects are not Sendable; the thread confinement makes it safe).
struct LibDBusPointer: @unchecked Sendable {
  let pointer: OpaquePointer
}

/// Carries a weak reference to the connection into libdbus's filter callback.
final class DBusFilterBox: @unchecked Sendable {
  weak var connection: DBusConnection?

  init(_ connection: DBusConnection) { self.connection = connection }

  /// libdbus's filter: runs on the connection's thread, inside `dbus_connection_dispatch`.
  static func route(_ message: OpaquePointer?, _ data: UnsafeMutableRawPointer?) -> DBusHandlerResult {
    guard let message, let data,
      let connection = Unmanaged<DBusFilterBox>.fromOpaque(data).takeUnretainedValue().connection
    else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let handle = LibDBusPointer(pointer: message)
    return connection.assumeIsolated { $0.receive(handle.pointer) }
  }
}
