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

  /// `cancel` waits for nothing: a caller may hold what a call under way
  /// needs. Here the handler waits (at most 5 s) for the canceller to go on.
  @Test func cancelDoesNotWaitForACallUnderWay() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let (started, start) = AsyncStream.makeStream(of: Void.self)
    let goOn = DispatchSemaphore(value: 0)
    let subscription = try await b.receiveSignals(matching: DBusMatchRule(interface: Self.interface, member: "Tick")) {
      _ in
      start.yield()
      _ = goOn.wait(timeout: .now() + 5)
    }
    try await tick(0, from: a)
    var iterator = started.makeAsyncIterator()
    _ = await iterator.next()
    let before = ContinuousClock.now
    subscription.cancel()
    let took = ContinuousClock.now - before
    goOn.signal()
    #expect(took < .seconds(1), "cancel waited \(took) for the handler")
    #expect(subscription.isCancelled)
  }

  /// A task whose cancellation cancels a subscription, while that
  /// subscription's handler resumes the task: the runtime holds the task's
  /// status while it runs cancellation handlers, and resuming the task takes
  /// it too. A `cancel` that waited for the handler deadlocked the two
  /// threads, and the connection's with them (CI, 2026-11-29).
  @Test(.timeLimit(.minutes(1))) func cancellingFromATasksCancellationWhileItsHandlerResumesIt() async throws {
    let a = try await bus.connect()
    let b = try await bus.connect()
    let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
    let (started, start) = AsyncStream.makeStream(of: Void.self)
    let subscription = try await b.receiveSignals(matching: DBusMatchRule(interface: Self.interface, member: "Tick")) {
      _ in
      start.yield()
      // Under way while the task is cancelled.
      usleep(100_000)
      waiting.withLock { $0.take() }?.resume()
    }
    let task = Task {
      await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in waiting.withLock { $0 = continuation } }
      } onCancel: {
        subscription.cancel()
      }
    }
    while waiting.withLock({ $0 == nil }) { try await Task.sleep(for: .milliseconds(1)) }
    try await tick(0, from: a)
    var iterator = started.makeAsyncIterator()
    _ = await iterator.next()
    task.cancel()
    await task.value
    // The connection's thread still answers.
    _ = try await b.busCall("GetId", [])
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
