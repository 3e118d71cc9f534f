import DBusTestSupport
import Foundation
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

  /// An actor method runs on the connection's thread, and so does libdbus's
  /// dispatch of the reply it waits for.
  @Test func theConnectionRunsOnItsThread() async throws {
    let a = try await bus.connect()
    let onThread = await a.runsOnItsThread()
    #expect(onThread)
    #expect(!a.executor.isCurrent)
    await a.close()
  }

  /// Once nothing refers to a closed connection, its thread ends: a
  /// thousand connections opened and closed in turn leave no thread behind.
  @Test(.timeLimit(.minutes(1))) func closedConnectionsLeaveNoThread() async throws {
    let before = Self.threadCount()
    for _ in 0..<200 {
      let connection = try await bus.connect()
      await connection.close()
    }
    // A thread ends after its last job; give the last ones a moment.
    let deadline = ContinuousClock.now + .seconds(10)
    while Self.threadCount() > before + 2, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(Self.threadCount() <= before + 2, "\(Self.threadCount()) threads, \(before) before")
  }

  /// The threads of this process (`/proc/self/task`).
  static func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
  }
}

extension DBusConnection {
  fileprivate func runsOnItsThread() -> Bool { executor.isCurrent }
}
