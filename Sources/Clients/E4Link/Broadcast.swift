/// Streams handed out to any number of listeners, each getting every value
/// yielded after it was made.
struct Broadcast<Element: Sendable> {
  private var sinks: [AsyncStream<Element>.Continuation] = []

  mutating func makeStream() -> AsyncStream<Element> {
    let (stream, continuation) = AsyncStream<Element>.makeStream()
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
