import GATT
import Synchronization

/// A running script's output as it reaches the app: each line the line
/// FIFO completes is classified and handed to the stream of events on the
/// call that delivered it (`LineFIFO.divert(to:)`), with no task woken per
/// line, up to the empty line that ends the output, an error line, or the
/// link's end. With a line timeout, one watch task ends the stream with
/// `timeout` when no line came for that long.
final class ScriptOutput: Sendable {
  private struct State {
    var isDone = false
    /// When the last line came (or the output started), on the stopwatch.
    var lastLine: Duration = .zero
    var watch: Task<Void, Never>?
  }

  /// The line that acknowledges the command (`e` for a script sent, `r` for one run from RAM).
  private let accepted: String
  private let events: AsyncThrowingStream<MeasurementEvent, any Error>.Continuation
  /// Called once the output is over, before the stream finishes (the client is free again).
  private let ended: @Sendable () -> Void
  /// Times the lines, when there is a line timeout.
  private let stopwatch: Stopwatch?
  private let state = Mutex(State())

  init(
    accepted: String, events: AsyncThrowingStream<MeasurementEvent, any Error>.Continuation,
    timed stopwatch: Stopwatch?, ended: @escaping @Sendable () -> Void
  ) {
    self.accepted = accepted
    self.events = events
    self.stopwatch = stopwatch
    self.ended = ended
  }

  /// Takes the output's next line; `false` once the output is over.
  func take(_ line: String) -> Bool {
    if let stopwatch {
      let now = stopwatch()
      state.withLock { $0.lastLine = now }
    }
    if line == accepted {
      events.yield(.scriptAccepted)
      return true
    }
    switch MethodScriptLine(line) {
    case .executing: events.yield(.scriptAccepted)
    case .measurementLoopStarted(let id): events.yield(.loopStarted(id: id))
    case .measurementLoopEnded: events.yield(.loopEnded)
    case .scanStarted(let id): events.yield(.scanStarted(id: id))
    case .scanEnded: events.yield(.scanEnded)
    case .loopStarted: events.yield(.nestedLoopStarted)
    case .loopEnded: events.yield(.nestedLoopEnded)
    case .package(let package): events.yield(.package(package))
    case .malformedPackage(let line, let reason): events.yield(.malformedPackage(line: line, reason: reason))
    case .abortAcknowledged: events.yield(.abortAcknowledged)
    case .text(let text): events.yield(.text(text))
    case .error(let code, let detail):
      finish(throwing: EmStatPicoClientError(.device(code: code, detail: detail), "the device answered '\(line)'"))
      return false
    case .end:
      finish(throwing: nil)
      return false
    }
    return true
  }

  /// Ends the output with `error` (the link's end, a timeout), or at its end (`nil`).
  func finish(throwing error: (any Error)?) {
    let (first, watch) = state.withLock { state in
      defer { (state.isDone, state.watch) = (true, nil) }
      return (!state.isDone, state.watch)
    }
    guard first else { return }
    watch?.cancel()
    ended()
    events.finish(throwing: error)
  }

  /// Ends the output with `timeout` once no line came for `limit`, by
  /// `expire` (which takes it off the line FIFO, then calls `finish`).
  /// One task, woken about once per `limit` while lines keep coming (not
  /// once per line), cancelled when the output ends.
  func watch(
    _ limit: Duration, clock: any Clock<Duration>, expire: @escaping @Sendable (any Error) -> Void
  ) {
    guard let stopwatch else { return }
    let task = Task(executorPreference: Task.currentExecutorPreference) {
      while true {
        let (done, last) = self.state.withLock { ($0.isDone, $0.lastLine) }
        guard !done else { return }
        let left = last + limit - stopwatch()
        guard left > .zero else {
          expire(EmStatPicoClientError(.timeout, "no answer from the device in time"))
          return
        }
        do { try await clock.sleep(for: left) } catch { return }
      }
    }
    state.withLock { $0.watch = task }
  }
}
