import Synchronization

/// The client's line FIFO (PalmSens' `processReceivedPackage` and the lines
/// it fills), taken as the notifications arrive: on the thread that delivers
/// each (`NotificationStream.receiveEach`), not by a task that woke for each
/// and went over to the client's actor, which cost more than the lines.
/// The one waiting for a line gets it at once; a line nobody waits for
/// stays until asked for. While a script's output streams, its lines go to
/// it instead (`divert(to:)`), on the same call.
final class LineFIFO: Sendable {
  /// Someone waiting for the next line (its request's id, and its timeout's timer).
  struct Waiter {
    var id: Int
    var continuation: CheckedContinuation<String, any Error>
    var timer: Task<Void, Never>?
  }

  private struct State {
    var partial: [UInt8] = []
    var lines: [String] = []
    var head = 0
    var waiter: Waiter?
    /// The script output that takes every line, while there is one.
    var output: ScriptOutput?
    /// Why the link ended, once it has.
    var failure: (any Error)?

    /// The oldest line not yet taken.
    mutating func take() -> String? {
      guard head < lines.count else { return nil }
      let line = lines[head]
      head += 1
      if head > 1024 {
        lines.removeFirst(head)
        head = 0
      }
      return line
    }
  }

  private let state = Mutex(State())

  /// Why the link ended, once it has.
  var failure: (any Error)? { state.withLock { $0.failure } }

  /// Appends a notification's bytes and hands on every line they complete
  /// (without its `\n` and a `\r` before it).
  func receive(_ bytes: [UInt8]) {
    var delivered: [(Waiter, String)] = []
    state.withLock { state in
      for byte in bytes {
        guard byte == UInt8(ascii: "\n") else {
          state.partial.append(byte)
          continue
        }
        if state.partial.last == UInt8(ascii: "\r") { state.partial.removeLast() }
        let line = String(decoding: state.partial, as: UTF8.self)
        state.partial.removeAll(keepingCapacity: true)
        // Under the lock, so that the lines reach the output in order.
        if let output = state.output {
          if !output.take(line) { state.output = nil }
        } else if let waiter = state.waiter {
          state.waiter = nil
          delivered.append((waiter, line))
        } else {
          state.lines.append(line)
        }
      }
    }
    for (waiter, line) in delivered {
      waiter.timer?.cancel()
      waiter.continuation.resume(returning: line)
    }
  }

  /// The next line if one is waiting; else the link's end as an error if it
  /// has ended; else `nil`.
  func next() throws -> String? {
    try state.withLock { state throws -> String? in
      if let line = state.take() { return line }
      if let failure = state.failure { throw failure }
      return nil
    }
  }

  /// Hands `waiter` the next line, or the link's end, as soon as there is
  /// one (at once if there is one already).
  func wait(_ waiter: Waiter) {
    let ready = state.withLock { state -> Result<String, any Error>? in
      if let line = state.take() { return .success(line) }
      if let failure = state.failure { return .failure(failure) }
      state.waiter = waiter
      return nil
    }
    guard let ready else { return }
    waiter.timer?.cancel()
    waiter.continuation.resume(with: ready)
  }

  /// Hands every line to `output` (those waiting first) until it is over,
  /// or ends it at once with the link's end if the link has ended.
  func divert(to output: ScriptOutput) {
    let failure = state.withLock { state -> (any Error)? in
      while let line = state.take() {
        if !output.take(line) { return nil }
      }
      if let failure = state.failure { return failure }
      state.output = output
      return nil
    }
    if let failure { output.finish(throwing: failure) }
  }

  /// Ends `output` with `error` (its line timeout), if it still takes the lines.
  func expire(_ output: ScriptOutput, with error: any Error) {
    let current = state.withLock { state -> Bool in
      guard state.output === output else { return false }
      state.output = nil
      return true
    }
    if current { output.finish(throwing: error) }
  }

  /// Ends the wait of request `id` with `error`, if it still waits.
  func expire(_ id: Int, with error: any Error) {
    let waiter = state.withLock { state -> Waiter? in
      guard let waiter = state.waiter, waiter.id == id else { return nil }
      state.waiter = nil
      return waiter
    }
    waiter?.continuation.resume(throwing: error)
  }

  /// The link ended: the first failure stays, and the one waiting gets this one.
  func fail(_ error: any Error) {
    let (waiter, output) = state.withLock { state -> (Waiter?, ScriptOutput?) in
      if state.failure == nil { state.failure = error }
      defer { (state.waiter, state.output) = (nil, nil) }
      return (state.waiter, state.output)
    }
    waiter?.timer?.cancel()
    waiter?.continuation.resume(throwing: error)
    output?.finish(throwing: error)
  }

  /// Drops the lines nobody asked for (late output of an earlier command).
  func dropLines() {
    state.withLock { state in
      state.lines = []
      state.head = 0
    }
  }

  /// A new link: no bytes, no lines, no script output, no failure (one waiting for a line still waits).
  func reset() {
    let output = state.withLock { state in
      defer { state = State(waiter: state.waiter) }
      return state.output
    }
    // The output of a script on the last link ends with it.
    output?.finish(throwing: EmStatPicoClientError(.notConnected, "disconnected"))
  }
}
