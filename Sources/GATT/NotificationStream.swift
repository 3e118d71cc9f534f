import Synchronization

/// The values of one characteristic's notifications or indications as a
/// central receives them, in order; it ends when the subscription does
/// (with an error when the link went down).
///
/// Shaped like `AsyncThrowingStream<[UInt8], any Error>` (`makeStream()`,
/// `yield`, `finish`, `onTermination`, unbounded buffer, one consumer), but
/// not generic and under one lock: a loopback run passes millions of
/// notifications through it, and the standard stream's generic storage cost
/// more than the rest of a notification's trip. A consumer that is behind
/// takes buffered values without suspending; one that only needs a short,
/// thread-safe step per value can take each as it is yielded, with no wake
/// at all (`receiveEach(_:)`).
public struct NotificationStream: AsyncSequence, Sendable {
  public typealias Element = [UInt8]
  public typealias Failure = any Error

  /// How a stream ended: the producer finished it (with an error or not), or
  /// the consumer went away (cancelled, or dropped the stream).
  public enum Termination: Sendable {
    case finished((any Error)?)
    case cancelled
  }

  /// The producer's side.
  public struct Continuation: Sendable {
    fileprivate let storage: Storage

    /// Adds a value at the end of the buffer; ignored once the stream has ended.
    public func yield(_ value: [UInt8]) { storage.yield(value) }

    /// Ends the stream once the consumer has taken what is buffered; the
    /// consumer's next read after that throws `error` if given.
    public func finish(throwing error: (any Error)? = nil) { storage.finish(throwing: error) }

    /// Called once when the stream ends, outside any lock of the stream's
    /// (at once if it has ended already).
    public var onTermination: (@Sendable (Termination) -> Void)? {
      get { storage.onTermination }
      nonmutating set { storage.onTermination = newValue }
    }
  }

  /// The consumer's side. Taking a value runs on the consumer's own
  /// executor or actor: no switch to another and back.
  public struct AsyncIterator: AsyncIteratorProtocol {
    fileprivate let consumer: Consumer

    public mutating func next() async throws -> [UInt8]? { try await consumer.storage.next() }

    public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> [UInt8]? {
      try await consumer.storage.next()
    }
  }

  private let consumer: Consumer

  /// A stream and the continuation that feeds it.
  public static func makeStream() -> (stream: NotificationStream, continuation: Continuation) {
    let storage = Storage()
    return (NotificationStream(consumer: Consumer(storage: storage)), Continuation(storage: storage))
  }

  public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(consumer: consumer) }

  /// Hands each value to `body`, in order: those buffered already at once,
  /// then each as the producer yields it, on the producer's own thread or
  /// task and before its `yield` returns (values are yielded one after
  /// another, so calls never overlap). Returns when the stream ends, or
  /// throws the error it ended with; cancelling the caller ends the stream.
  /// Takes the place of iterating: a stream has one consumer.
  ///
  /// No task wakes per value, which is what a loopback run that delivers
  /// millions of notifications spends most on; `body` must be short and
  /// safe to call from any thread.
  public func receiveEach(_ body: @escaping @Sendable ([UInt8]) -> Void) async throws {
    // The consumer's side stays alive until the end: dropping it cancels.
    defer { extendLifetime(consumer) }
    try await consumer.storage.receiveEach(body)
  }

  /// Whether `receiveEach` takes each value as it is yielded now (for tests).
  var takesEachValue: Bool { consumer.storage.takesEachValue }

  /// Holds the storage for the consumer's side; when the stream and its
  /// iterators are gone, the stream is cancelled.
  fileprivate final class Consumer: Sendable {
    let storage: Storage
    init(storage: Storage) { self.storage = storage }
    deinit { storage.cancel() }
  }

  /// `receiveEach`'s body, held by reference: a closure handed out of the
  /// state's lock through `withLock`'s generic result was wrapped in a new
  /// thunk on the way out and again on the way back, two allocations for
  /// every value yielded.
  fileprivate final class Sink: Sendable {
    let body: @Sendable ([UInt8]) -> Void
    init(body: @escaping @Sendable ([UInt8]) -> Void) { self.body = body }
  }

  fileprivate final class Storage: Sendable {
    private struct State {
      var buffer: [[UInt8]] = []
      /// Index of the first value in `buffer` not yet taken.
      var head = 0
      var waiter: UnsafeContinuation<[UInt8]?, any Error>?
      /// The consumer that takes each value as it is yielded (`receiveEach`).
      var sink: Sink?
      /// `receiveEach`, waiting for the end.
      var endWaiter: UnsafeContinuation<Void, any Error>?
      /// How the stream ended, once it has: no more values come.
      var termination: Termination?
      var ended: Bool { termination != nil }
      var failure: (any Error)?
      var onTermination: (@Sendable (Termination) -> Void)?

      mutating func take() -> [UInt8]? {
        guard head < buffer.count else { return nil }
        let value = buffer[head]
        head += 1
        if head == buffer.count {
          buffer.removeAll(keepingCapacity: true)
          head = 0
        } else if head >= 1024, head * 2 >= buffer.count {
          buffer.removeFirst(head)
          head = 0
        }
        return value
      }

      /// What the consumer's read returns now, or `nil` when it must wait.
      mutating func ready() -> Result<[UInt8]?, any Error>? {
        if let value = take() { return .success(value) }
        guard ended else { return nil }
        if let error = failure {
          failure = nil
          return .failure(error)
        }
        return .success(nil)
      }
    }

    private let state = Mutex(State())

    var takesEachValue: Bool { state.withLock { $0.sink != nil } }

    var onTermination: (@Sendable (Termination) -> Void)? {
      get { state.withLock { $0.onTermination } }
      set {
        let ended = state.withLock { state -> Termination? in
          guard let termination = state.termination else {
            state.onTermination = newValue
            return nil
          }
          return termination
        }
        // Set after the end: told of it at once.
        if let ended { newValue?(ended) }
      }
    }

    func yield(_ value: [UInt8]) {
      let (waiter, sink) = state.withLock { state -> (UnsafeContinuation<[UInt8]?, any Error>?, Sink?) in
        guard !state.ended else { return (nil, nil) }
        if let sink = state.sink { return (nil, sink) }
        if let waiter = state.waiter {
          state.waiter = nil
          return (waiter, nil)
        }
        state.buffer.append(value)
        return (nil, nil)
      }
      sink?.body(value)
      waiter?.resume(returning: value)
    }

    func finish(throwing error: (any Error)?) {
      end(.finished(error))
    }

    func cancel() {
      end(.cancelled)
    }

    private func end(_ termination: Termination) {
      let (waiter, endWaiter, handler, outcome) = state.withLock {
        state -> (
          UnsafeContinuation<[UInt8]?, any Error>?, UnsafeContinuation<Void, any Error>?,
          (@Sendable (Termination) -> Void)?, Result<[UInt8]?, any Error>
        ) in
        guard !state.ended else { return (nil, nil, nil, .success(nil)) }
        state.termination = termination
        if case .cancelled = termination {
          state.buffer = []
          state.head = 0
        } else if case .finished(let error) = termination {
          state.failure = error
        }
        let handler = state.onTermination
        state.onTermination = nil
        state.sink = nil
        let endWaiter = state.endWaiter
        state.endWaiter = nil
        // A waiting consumer has nothing buffered: it gets the end now.
        guard let waiter = state.waiter else {
          let outcome: Result<[UInt8]?, any Error> = state.failure.map { .failure($0) } ?? .success(nil)
          if endWaiter != nil { state.failure = nil }
          return (nil, endWaiter, handler, outcome)
        }
        state.waiter = nil
        return (waiter, nil, handler, state.ready() ?? .success(nil))
      }
      waiter?.resume(with: outcome)
      endWaiter?.resume(with: outcome.map { _ in () })
      handler?(termination)
    }

    /// `NotificationStream.receiveEach`: the buffered values first, then the
    /// sink is installed in the same lock that finds the buffer empty, so
    /// no value is passed over or handed on out of order.
    nonisolated(nonsending) func receiveEach(_ body: @escaping @Sendable ([UInt8]) -> Void) async throws {
      while true {
        let (values, ended) = state.withLock { state -> ([[UInt8]], Bool) in
          if state.head < state.buffer.count {
            let values = Array(state.buffer[state.head...])
            state.buffer.removeAll(keepingCapacity: true)
            state.head = 0
            return (values, false)
          }
          if !state.ended { state.sink = Sink(body: body) }
          return ([], state.ended)
        }
        for value in values { body(value) }
        if ended {
          let failure = state.withLock { state -> (any Error)? in
            defer { state.failure = nil }
            return state.failure
          }
          if let failure { throw failure }
          return
        }
        if values.isEmpty { break }
      }
      try await withTaskCancellationHandler {
        try await withUnsafeThrowingContinuation { (waiter: UnsafeContinuation<Void, any Error>) in
          let ended = state.withLock { state -> Result<Void, any Error>? in
            guard state.ended else {
              state.endWaiter = waiter
              return nil
            }
            defer { state.failure = nil }
            return state.failure.map { .failure($0) } ?? .success(())
          }
          if let ended { waiter.resume(with: ended) }
        }
      } onCancel: {
        cancel()
      }
    }

    nonisolated(nonsending) func next() async throws -> [UInt8]? {
      if let ready = state.withLock({ $0.ready() }) { return try ready.get() }
      return try await withTaskCancellationHandler {
        try await withUnsafeThrowingContinuation { (waiter: UnsafeContinuation<[UInt8]?, any Error>) in
          let ready = state.withLock { state -> Result<[UInt8]?, any Error>? in
            if let ready = state.ready() { return ready }
            state.waiter = waiter
            return nil
          }
          if let ready { waiter.resume(with: ready) }
        }
      } onCancel: {
        cancel()
      }
    }
  }
}
