import DBusTestSupport
import Foundation
import Synchronization
import Testing

@testable import DBus

/// `receiveSignals(matching:_:)`: a handler on the connection's thread, in
/// order, that stops when cancelled and hears of the connection's end.
@Suite struct SignalSubscriptionTests {
  let bus: PrivateBus
  init() async throws { bus = try await PrivateBus() }

  static let interface = "org.doppel.Test"
  static let path = try! ObjectPath("/org/doppel/test")

  /// What a handler saw, under a lock.
  final class Record: Sendable {
    let ticks = Mutex<[UInt32]>([])
    let offThread = Atomic(0)
    let closed = Mutex<[DBusError]>([])
    /// Yields each tick's count as it is recorded.
    let counts: AsyncStream<Int>
    let counted: AsyncStream<Int>.Continuation

    init() { (counts, counted) = AsyncStream.makeStream(of: Int.self) }

    func take(_ event: DBusSignalSubscription.Event, on connection: DBusConnection) {
      if !connection.executor.isCurrent { offThread.add(1, ordering: .relaxed) }
      switch event {
      case .signal(let message):
        guard case .uint32(let n)? = message.body.first else { return }
        let count = ticks.withLock {
          $0.append(n)
          return $0.count
        }
        counted.yield(count)
      case .closed(let error):
        closed.withLock { $0.append(error) }
      }
    }

    /// Waits until `count` ticks were recorded, 5 s at most.
    func waitFor(_ count: Int) async throws {
      let counts = counts
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          for await seen in counts where seen >= count { return }
        }
        group.addTask {
          try await Task.sleep(for: .seconds(5))
          throw DBusError.failed("only \(self.ticks.withLock { $0.count }) of \(count) signals within 5 s")
        }
        try await group.next()
        group.cancelAll()
      }
    }
  }

  func tick(_ n: UInt32, from a: DBusConnection, member: String = "Tick") async throws {
    try await a.emit(path: Self.path, interface: Self.interface, member: member, arguments: [.uint32(n)])
  }

  @Test func theHandlerGetsEveryMatchingSignalInOrderOnTheConnectionsThread() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let record = Record()
    let subscription = try await b.receiveSignals(matching: DBusMatchRule(interface: Self.interface, member: "Tick")) {
      record.take($0, on: b)
    }
    try await tick(999, from: a, member: "Other")
    for n in 0..<500 { try await tick(UInt32(n), from: a) }
    try await record.waitFor(500)
    #expect(record.ticks.withLock { $0 } == Array(0..<500))
    #expect(record.offThread.load(ordering: .relaxed) == 0)
    #expect(subscription.rule.member == "Tick")
    subscription.cancel()
  }

  @Test func afterCancelTheHandlerIsNotCalledAndTheSubscriptionIsRemoved() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let record = Record()
    let subscription = try await b.receiveSignals(matching: DBusMatchRule(interface: Self.interface, member: "Tick")) {
      record.take($0, on: b)
    }
    try await tick(0, from: a)
    try await record.waitFor(1)
    subscription.cancel()
    #expect(subscription.isCancelled)
    // A second subscription sees the last of these, so all were dispatched on b.
    let marker = try await b.signals(matching: DBusMatchRule(interface: Self.interface, member: "Done"))
    for n in 1...50 { try await tick(UInt32(n), from: a) }
    try await tick(0, from: a, member: "Done")
    var markers = marker.makeAsyncIterator()
    _ = try await markers.next()
    #expect(record.ticks.withLock { $0 } == [0])
    // The subscription (and its rule on the bus) is removed in the background.
    let deadline = ContinuousClock.now + .seconds(5)
    while await b.subscriptions[subscription.id] != nil, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(await b.subscriptions[subscription.id] == nil)
  }

  @Test func cancelledFromItsHandlerNoOtherCallFollows() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let record = Record()
    let holder = Mutex<DBusSignalSubscription?>(nil)
    let subscription = try await b.receiveSignals(matching: DBusMatchRule(interface: Self.interface, member: "Tick")) {
      record.take($0, on: b)
      holder.withLock { $0 }?.cancel()
    }
    holder.withLock { $0 = subscription }
    let marker = try await b.signals(matching: DBusMatchRule(interface: Self.interface, member: "Done"))
    for n in 0..<20 { try await tick(UInt32(n), from: a) }
    try await tick(0, from: a, member: "Done")
    var markers = marker.makeAsyncIterator()
    _ = try await markers.next()
    #expect(record.ticks.withLock { $0 } == [0])
  }

  @Test func cancelFromAnotherThreadWaitsForACallInProgress() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let (started, start) = AsyncStream.makeStream(of: Void.self)
    let holder = Mutex<DBusSignalSubscription?>(nil)
    let handlerEnded = Mutex<ContinuousClock.Instant?>(nil)
    let subscription = try await b.receiveSignals(matching: DBusMatchRule(interface: Self.interface, member: "Tick")) {
      _ in
      start.yield()
      // Still running once cancel was called, however late the test's task runs.
      while holder.withLock({ $0 })?.isCancelled != true { usleep(1_000) }
      usleep(100_000)
      handlerEnded.withLock { $0 = .now }
    }
    holder.withLock { $0 = subscription }
    try await tick(0, from: a)
    var iterator = started.makeAsyncIterator()
    _ = await iterator.next()
    subscription.cancel()
    let cancelReturned = ContinuousClock.now
    let ended = try #require(handlerEnded.withLock { $0 }, "cancel returned while the handler was still running")
    #expect(ended <= cancelReturned)
    // A second cancel, from another thread, waits as well and does nothing more.
    subscription.cancel()
    #expect(subscription.isCancelled)
  }

  @Test func closingTheConnectionCallsTheHandlerOnceWithClosed() async throws {
    let a = try await bus.connect()
    let record = Record()
    let subscription = try await a.receiveSignals(matching: DBusMatchRule(interface: Self.interface)) {
      record.take($0, on: a)
    }
    await a.close()
    let closed = record.closed.withLock { $0 }
    #expect(closed.count == 1)
    #expect(closed.first?.name == DBusError.Name.disconnected)
    subscription.cancel()
    await #expect(throws: DBusError.self) {
      _ = try await a.receiveSignals(matching: DBusMatchRule(interface: Self.interface)) { _ in }
    }
  }
}
