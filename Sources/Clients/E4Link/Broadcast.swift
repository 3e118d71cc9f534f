/// Streams handed out to any number of listeners, each getting every value
/// yielded after it was made.
struct Broadcast<Element: Sendable> {
  private var sinks: [AsyncStream<Element>.Continuation] = []

  /// A new listener's stream, starting with `initial` when given.
  mutating func makeStream(initial: Element? = nil) -> AsyncStream<Element> {
    let (stream, continuation) = AsyncStream<Element>.makeStream()
    if let initial { continuation.yield(initial) }
    sinks.append(continuation)
    return stream
  }

  mutating func yield(_ element: Element) {
    sinks.removeAll { sink in
      if case .terminated = sink.yield(element) { return true }
      return false
    }
  }

  mutating func finish() {
    for sink in sinks { sink.finish() }
    sinks = []
  }
}
