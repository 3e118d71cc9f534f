import GATT

/// A Blend Micro's readings: each UART TX notification decoded as the
/// consumer takes it, timed from the moment `BlendMicroClient.readings()`
/// subscribed. A consumer that keeps up sees each reading at its arrival.
/// Ends when the subscription does (with an error when the board is lost).
public struct BlendMicroReadings: AsyncSequence, Sendable {
  public typealias Element = BlendMicroReading
  public typealias Failure = any Error

  let notifications: NotificationStream
  /// Time since the subscription.
  let elapsed: Stopwatch

  public struct AsyncIterator: AsyncIteratorProtocol {
    var notifications: NotificationStream.AsyncIterator
    let elapsed: Stopwatch

    public mutating func next() async throws -> BlendMicroReading? {
      guard let bytes = try await notifications.next() else { return nil }
      return BlendMicroClient.decode(bytes, at: elapsed())
    }

    public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> BlendMicroReading? {
      guard let bytes = try await notifications.next(isolation: actor) else { return nil }
      return BlendMicroClient.decode(bytes, at: elapsed())
    }
  }

  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(notifications: notifications.makeAsyncIterator(), elapsed: elapsed)
  }
}
