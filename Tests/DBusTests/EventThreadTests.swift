import DBusTestSupport
import Synchronization
import Testing

@testable import DBus

/// The connection's own thread: it reads the socket, runs the connection's
/// jobs and dispatches replies, and it ends once the connection is gone.
@Suite struct EventThreadTests {
  let bus: PrivateBus
  init() async throws { bus = try await PrivateBus() }

  static let path = try! ObjectPath("/org/doppel/echo")

  /// Many callers at once on both connections, with messages in flight both
  /// ways: no reply may wait for a readiness event that never comes (the
  /// earlier dispatch-source loop once lost one under load, and the call then
  /// waited out its timeout). Each call is bounded well below libdbus's
  /// 25 s default, so a lost wakeup fails the test instead of slowing it.
  @Test(.timeLimit(.minutes(1))) func concurrentCallsAllComplete() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let echo = try DBusInterface(
      name: "org.doppel.Echo", methods: [DBusMethod(name: "Echo", input: "u", output: "u") { $0.body }])
    try await a.export(Self.path, interfaces: [echo])
    try await b.export(Self.path, interfaces: [echo])
    let answered = try await withThrowingTaskGroup(of: Int.self) { group in
      for caller in 0..<8 {
        let (from, to) = caller.isMultiple(of: 2) ? (a, b) : (b, a)
        group.addTask {
          for n in 0..<250 {
            let value = UInt32(caller * 1000 + n)
            let reply = try await from.send(
              DBusMessage.methodCall(
                destination: to.uniqueName, path: Self.path, interface: "org.doppel.Echo", member: "Echo",
                body: [.uint32(value)]), timeout: .seconds(5))
            #expect(reply.body == [.uint32(value)])
          }
          return 250
        }
      }
      return try await group.reduce(0, +)
    }
    #expect(answered == 2000)
    await a.close()
    await b.close()
  }

  /// An `immediate` method is answered on the connection's thread as the
  /// call is read: with what it returns, with what it throws, and with
  /// `Failed` for a body that is not what it declares.
  @Test(.timeLimit(.minutes(1))) func anImmediateMethodAnswersOnTheConnectionsThread() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let onThread = Mutex<[Bool]>([])
    let interface = try DBusInterface(
      name: "org.doppel.Echo",
      methods: [
        DBusMethod(
          name: "Echo", input: "u", output: "u",
          immediate: { call in
            onThread.withLock { $0.append(a.executor.isCurrent) }
            return call.body
          }),
        DBusMethod(
          name: "Refuse", immediate: { _ in throw DBusError(name: "org.doppel.Error.Refused", message: "refused") }),
        DBusMethod(name: "Misdeclared", output: "s", immediate: { _ in [.uint32(1)] }),
      ])
    try await a.export(Self.path, interfaces: [interface])
    func call(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
      try await b.call(
        destination: a.uniqueName, path: Self.path, interface: "org.doppel.Echo", method: method,
        arguments: arguments, timeout: .seconds(5))
    }
    #expect(try await call("Echo", [.uint32(7)]) == [.uint32(7)])
    #expect(try await call("Echo", [.uint32(8)]) == [.uint32(8)])
    #expect(onThread.withLock { $0 } == [true, true])
    await #expect { _ = try await call("Refuse") } throws: { ($0 as? DBusError)?.name == "org.doppel.Error.Refused" }
    await #expect { _ = try await call("Misdeclared") } throws: {
      ($0 as? DBusError)?.name == DBusError.Name.failed && "\($0)".contains("declared (s)")
    }
    await a.close()
    await b.close()
  }

  /// A call whose task is cancelled before the call reaches the connection's
  /// thread throws `CancellationError` and is never sent: the peer sees only
  /// the call made after it.
  @Test(.timeLimit(.minutes(1))) func aCallCancelledBeforeItStartsIsNeverSent() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let calls = Mutex(0)
    let counter = try DBusInterface(
      name: "org.doppel.Echo",
      methods: [
        DBusMethod(
          name: "Count", output: "u",
          immediate: { _ in
            let count = calls.withLock { count in
              count += 1
              return count
            }
            return [.uint32(UInt32(count))]
          })
      ])
    try await a.export(Self.path, interfaces: [counter])
    let count = try DBusMessage.methodCall(
      destination: a.uniqueName, path: Self.path, interface: "org.doppel.Echo", member: "Count")
    let cancelled = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await b.send(count, timeout: .seconds(5))
    }
    await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
    #expect(try await b.send(count, timeout: .seconds(5)).body == [.uint32(1)])
    #expect(calls.withLock { $0 } == 1)
    await a.close()
    await b.close()
  }

  /// An actor method runs on the connection's thread, and nothing else does.
  @Test func theConnectionRunsOnItsThread() async throws {
    let a = try await bus.connect()
    let onThread = await a.runsOnItsThread()
    #expect(onThread)
    #expect(!a.executor.isCurrent)
    await a.close()
  }

  /// Nonisolated code in a task that prefers the connection's thread (its
  /// task executor) sends from the thread and is resumed there by each
  /// reply: a hundred calls hand the thread at most two jobs from other
  /// threads (entering the preference), so they cannot wake it more often.
  /// The same calls from the cooperative pool hand each call over.
  @Test(.timeLimit(.minutes(1))) func aReplyResumesATaskThatPrefersTheThreadWithoutAHandOver() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let echo = try DBusInterface(
      name: "org.doppel.Echo",
      methods: [DBusMethod(name: "Echo", input: "u", output: "u", immediate: { $0.body })])
    try await a.export(Self.path, interfaces: [echo])
    let destination = a.uniqueName
    /// Whether 100 calls come back right, each resumed on b's thread or not, as `onThread` says.
    @Sendable func echoes(onThread: Bool) async throws -> Bool {
      for n in 0..<UInt32(100) {
        let reply = try await b.call(
          destination: destination, path: Self.path, interface: "org.doppel.Echo", method: "Echo",
          arguments: [.uint32(n)], timeout: .seconds(5))
        guard reply == [.uint32(n)], b.executor.isCurrent == onThread else { return false }
      }
      return true
    }
    let core = b.executor.core
    var handOvers = core.handOvers
    #expect(try await echoes(onThread: false))
    let fromThePool = core.handOvers - handOvers

    handOvers = core.handOvers
    let preferring = try await withTaskExecutorPreference(b.taskExecutor) { try await echoes(onThread: true) }
    #expect(preferring)
    #expect(core.handOvers - handOvers <= 2, "preferring the thread: \(core.handOvers - handOvers) hand-overs")
    #expect(fromThePool >= 100, "from the pool: \(fromThePool) hand-overs for 100 calls")
    await a.close()
    await b.close()
  }

  /// A call awaited on the connection's thread (a task that prefers it)
  /// when the connection closes fails with `Disconnected` instead of
  /// waiting, and the thread stays up for what still prefers it: a task
  /// that prefers it afterwards runs there, and a call from it fails at once.
  @Test(.timeLimit(.minutes(1))) func closingFailsACallAwaitedOnTheThreadAndKeepsTheThread() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let calls = Mutex(0)
    let slow = try DBusInterface(
      name: "org.doppel.Echo",
      methods: [
        DBusMethod(name: "Slow") { _ in
          calls.withLock { $0 += 1 }
          try await Task.sleep(for: .seconds(30))
          return []
        }
      ])
    try await a.export(Self.path, interfaces: [slow])
    let destination = a.uniqueName
    @Sendable func callSlow() async throws -> [DBusValue] {
      try await b.call(
        destination: destination, path: Self.path, interface: "org.doppel.Echo", method: "Slow",
        timeout: .seconds(20))
    }
    let executor = b.taskExecutor
    let waiting = Task(executorPreference: executor) { try await callSlow() }
    // Closed once the call is on its way: a has it.
    while calls.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
    await b.close()
    await #expect { _ = try await waiting.value } throws: {
      ($0 as? DBusError)?.name == DBusError.Name.disconnected
    }
    let (onThread, failed) = await withTaskExecutorPreference(executor) {
      let onThread = b.executor.isCurrent
      do {
        _ = try await callSlow()
        return (onThread, false)
      } catch {
        return (onThread, (error as? DBusError)?.name == DBusError.Name.disconnected)
      }
    }
    #expect(onThread)
    #expect(failed)
    await a.close()
  }

  /// Once nothing refers to a closed connection, its thread ends (its
  /// core, which the thread holds while it runs, goes away): two hundred
  /// connections opened and closed in turn leave no thread behind.
  @Test(.timeLimit(.minutes(1))) func closedConnectionsLeaveNoThread() async throws {
    var cores: [WeakCore] = []
    for _ in 0..<200 {
      let connection = try await bus.connect()
      cores.append(WeakCore(connection.executor.core))
      await connection.close()
    }
    #expect(try await Self.allEnded(cores), "\(cores.filter { $0.core != nil }.count) of 200 threads still run")
  }

  /// A connection let go of without `close()` is closed on its thread, and
  /// that thread then ends: the bus sees the connection's name go.
  @Test(.timeLimit(.minutes(1))) func aConnectionDroppedWithoutClosingEnds() async throws {
    let watcher = try await bus.connect()
    var core: [WeakCore] = []
    var name = ""
    do {
      let dropped = try await bus.connect()
      name = dropped.uniqueName
      core.append(WeakCore(dropped.executor.core))
      #expect(try await watcher.nameOwner(of: name) == name)
    }
    #expect(try await Self.allEnded(core), "the dropped connection's thread still runs")
    let deadline = ContinuousClock.now + .seconds(10)
    while try await watcher.nameOwner(of: name) != nil, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(try await watcher.nameOwner(of: name) == nil, "the bus still knows \(name)")
    await watcher.close()
  }

  /// A signal subscription still held, and its stream, do not keep a
  /// dropped connection's thread alive.
  @Test(.timeLimit(.minutes(1))) func heldSubscriptionsDoNotKeepADroppedConnectionsThread() async throws {
    var core: [WeakCore] = []
    var kept: (DBusSignalSubscription, DBusSignalStream)?
    do {
      let dropped = try await bus.connect()
      core.append(WeakCore(dropped.executor.core))
      let rule = try DBusMatchRule(interface: "org.doppel.Test")
      let subscription = try await dropped.receiveSignals(matching: rule) { _ in }
      kept = (subscription, try await dropped.signals(matching: rule))
    }
    #expect(try await Self.allEnded(core), "the dropped connection's thread still runs")
    #expect(kept != nil)
  }

  final class WeakCore: @unchecked Sendable {
    weak var core: DBusEventThread.Core?
    init(_ core: DBusEventThread.Core) { self.core = core }
  }

  /// Whether every core has gone within 10 s (a thread ends after its last job).
  static func allEnded(_ cores: [WeakCore]) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while cores.contains(where: { $0.core != nil }) {
      guard ContinuousClock.now < deadline else { return false }
      try await Task.sleep(for: .milliseconds(20))
    }
    return true
  }
}

extension DBusConnection {
  fileprivate func runsOnItsThread() -> Bool { executor.isCurrent }
}
