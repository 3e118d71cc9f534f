import Signals
import Synchronization

/// What a device sampled from a source: every (time, value) in order, so a
/// test knows exactly what was sent.
final class SampleLog: Sendable {
  private let entries = Mutex<[(time: Double, value: Double)]>([])

  var values: [Double] { entries.withLock { $0.map(\.value) } }
  var times: [Double] { entries.withLock { $0.map(\.time) } }

  fileprivate func append(_ time: Double, _ value: Double) {
    entries.withLock { $0.append((time, value)) }
  }

  /// `source`, logging every value it gives into this log.
  func recording(_ source: any SignalSource) -> LoggedSource { LoggedSource(base: source, log: self) }
}

/// A source that logs what it gives.
struct LoggedSource: SignalSource {
  var base: any SignalSource
  let log: SampleLog

  mutating func value(at time: Double) -> Double? {
    guard let value = base.value(at: time) else { return nil }
    log.append(time, value)
    return value
  }
}
