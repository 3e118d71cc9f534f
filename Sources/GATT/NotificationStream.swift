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
/// takes buffered values without suspending.
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

  /// Holds the storage for the consumer's side; when the stream and its
  /// iterators are gone, the stream is cancelled.
  fileprivate final class Consumer: Sendable {
    let storage: Storage
    init(storage: Storage) { self.storage = storage }
    deinit { storage.cancel() }
  }

  fileprivate final class Storage: Sendable {
    private struct State {
      var buffer: [[UInt8]] = []
      /// Index of the first value in `buffer` not yet taken.
      var head = 0
      var waiter: UnsafeContinuation<[UInt8]?, any Error>?
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
      let waiter = state.withLock { state -> UnsafeContinuation<[UInt8]?, any Error>? in
        guard !state.ended else { return nil }
        if let waiter = state.waiter {
          state.waiter = nil
          return waiter
        }
        state.buffer.append(value)
        return nil
      }
      waiter?.resume(returning: value)
    }

    func finish(throwing error: (any Error)?) {
      end(.finished(error))
    }

    func cancel() {
      end(.cancelled)
    }

    private func end(_ termination: Termination) {
      let (waiter, handler, outcome) = state.withLock {
        state -> (
          UnsafeContinuation<[UInt8]?, any Error>?, (@Sendable (Termination) -> Void)?, Result<[UInt8]?, any Error>
        ) in
        guard !state.ended else { return (nil, nil, .success(nil)) }
        state.termination = termination
        if case .cancelled = termination {
          state.buffer = []
          state.head = 0
        } else if case .finished(let error) = termination {
          state.failure = error
        }
        let handler = state.onTermination
        state.onTermination = nil
        // A waiting consumer has nothing buffered: it gets the end now.
        guard let waiter = state.waiter else { return (nil, handler, .success(nil)) }
        state.waiter = nil
        return (waiter, handler, state.ready() ?? .success(nil))
      }
      waiter?.resume(with: outcome)
      handler?(termination)
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
