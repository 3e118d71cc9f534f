import Synchronization
import Testing

@testable import GATT

@Suite(.timeLimit(.minutes(1)))
struct NotificationStreamTests {
  struct LinkLost: Error, Equatable {}

  /// Records how a stream's termination handler was called.
  final class Terminations: Sendable {
    private let seen = Mutex<[String]>([])
    var all: [String] { seen.withLock { $0 } }

    func record(_ termination: NotificationStream.Termination) {
      let text =
        switch termination {
        case .cancelled: "cancelled"
        case .finished(nil): "finished"
        case .finished(let error?): "finished: \(error)"
        }
      seen.withLock { $0.append(text) }
    }
  }

  @Test func deliversBufferedAndLaterValuesInOrderThenEnds() async throws {
    let (stream, continuation) = NotificationStream.makeStream()
    let terminations = Terminations()
    continuation.onTermination = { terminations.record($0) }
    for n in 0..<3000 { continuation.yield([UInt8(n % 256), UInt8(n / 256)]) }
    let reader = Task {
      var received: [Int] = []
      for try await value in stream { received.append(Int(value[0]) + 256 * Int(value[1])) }
      return received
    }
    for n in 3000..<3100 {
      continuation.yield([UInt8(n % 256), UInt8(n / 256)])
      await Task.yield()
    }
    continuation.finish()
    continuation.yield([0xFF, 0xFF])  // after the end: ignored
    #expect(try await reader.value == Array(0..<3100))
    #expect(terminations.all == ["finished"])
  }

  @Test func finishingWithAnErrorThrowsItAfterTheBufferedValues() async throws {
    let (stream, continuation) = NotificationStream.makeStream()
    continuation.yield([1])
    continuation.yield([2])
    continuation.finish(throwing: LinkLost())
    var iterator = stream.makeAsyncIterator()
    #expect(try await iterator.next() == [1])
    #expect(try await iterator.next() == [2])
    await #expect(throws: LinkLost.self) { try await iterator.next() }
    // Thrown once; the stream is over after that.
    #expect(try await iterator.next() == nil)
  }

  /// A stream whose termination is recorded.
  static func watchedStream() -> (NotificationStream, NotificationStream.Continuation, Terminations) {
    let (stream, continuation) = NotificationStream.makeStream()
    let terminations = Terminations()
    continuation.onTermination = { terminations.record($0) }
    return (stream, continuation, terminations)
  }

  @Test func cancellingAWaitingConsumerEndsTheStreamAndTellsTheProducer() async throws {
    let (stream, continuation, terminations) = Self.watchedStream()
    let reader = Task {
      var count = 0
      for try await _ in stream { count += 1 }
      return count
    }
    continuation.yield([1])
    while terminations.all.isEmpty {
      reader.cancel()
      await Task.yield()
    }
    #expect(try await reader.value <= 1)
    #expect(terminations.all == ["cancelled"])
  }

  @Test func droppingTheStreamEndsIt() async {
    let terminations = Terminations()
    var continuation: NotificationStream.Continuation?
    do {
      let (stream, made) = NotificationStream.makeStream()
      made.onTermination = { terminations.record($0) }
      made.yield([1])
      continuation = made
      _ = stream
    }
    #expect(terminations.all == ["cancelled"])
    continuation?.yield([2])  // nobody listens: ignored
  }

  @Test func aHandlerSetAfterTheEndIsToldAtOnce() {
    let (stream, continuation) = NotificationStream.makeStream()
    continuation.finish()
    let terminations = Terminations()
    continuation.onTermination = { terminations.record($0) }
    #expect(terminations.all == ["finished"])
    withExtendedLifetime(stream) {}
  }

  /// The values a `receiveEach` body was handed, and on which thread of calls.
  final class Taken: Sendable {
    private let values = Mutex<[Int]>([])
    var all: [Int] { values.withLock { $0 } }
    func take(_ value: [UInt8]) { values.withLock { $0.append(Int(value[0]) + 256 * Int(value[1])) } }
  }

  /// The buffered values first, then each yielded one before `yield`
  /// returns (no wake in between), then the end.
  @Test func receiveEachTakesBufferedValuesThenEachAsItIsYielded() async throws {
    let (stream, continuation) = NotificationStream.makeStream()
    let terminations = Terminations()
    continuation.onTermination = { terminations.record($0) }
    for n in 0..<300 { continuation.yield([UInt8(n % 256), UInt8(n / 256)]) }
    let taken = Taken()
    let consumer = Task { try await stream.receiveEach { taken.take($0) } }
    while !stream.takesEachValue { await Task.yield() }
    #expect(taken.all == Array(0..<300))
    for n in 300..<400 {
      continuation.yield([UInt8(n % 256), UInt8(n / 256)])
      // Taken on this very call, not by a task woken later.
      #expect(taken.all.last == n)
    }
    continuation.finish()
    continuation.yield([0xFF, 0xFF])  // after the end: ignored
    try await consumer.value
    #expect(taken.all == Array(0..<400))
    #expect(terminations.all == ["finished"])
  }

  @Test func receiveEachThrowsTheErrorTheStreamEndedWithAfterItsValues() async throws {
    let (stream, continuation) = NotificationStream.makeStream()
    continuation.yield([1, 0])
    continuation.finish(throwing: LinkLost())
    let taken = Taken()
    await #expect(throws: LinkLost.self) { try await stream.receiveEach { taken.take($0) } }
    #expect(taken.all == [1])

    // Ending while the consumer waits: the same.
    let (live, feed) = NotificationStream.makeStream()
    let consumer = Task { try await live.receiveEach { taken.take($0) } }
    feed.yield([2, 0])
    while taken.all.count < 2 { await Task.yield() }
    feed.finish(throwing: LinkLost())
    await #expect(throws: LinkLost.self) { try await consumer.value }
    #expect(taken.all == [1, 2])
  }

  @Test func cancellingReceiveEachEndsTheStreamAndTellsTheProducer() async throws {
    let (stream, continuation, terminations) = Self.watchedStream()
    let taken = Taken()
    let consumer = Task { try await stream.receiveEach { taken.take($0) } }
    continuation.yield([1, 0])
    while terminations.all.isEmpty {
      consumer.cancel()
      await Task.yield()
    }
    try await consumer.value
    continuation.yield([2, 0])  // nobody listens: ignored
    #expect(taken.all.count <= 1)
    #expect(terminations.all == ["cancelled"])
  }
}
