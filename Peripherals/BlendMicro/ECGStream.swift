import Signals
import Synchronization

/// What the Blend Micro's UART TX carries, sample by sample: the synthetic
/// ECG, or a scenario's signal in its place, numbered from the first sample
/// the board ever sent so that a new stream goes on where the last one
/// stopped.
///
/// Its own type, under a lock rather than in the board's actor, so that the
/// stream loop takes a sample without a switch to the actor and back.
final class ECGStream: Sendable {
  private struct State {
    var source: (any SignalSource)?
    var nextSample = 0
    /// Samples of the synthetic ECG computed ahead, one second at a time, from `bufferStart`.
    var buffer: [Double] = []
    var bufferStart = 0
    /// Where the synthetic ECG's beats stand after the buffer.
    var beats = SyntheticECG.BeatCursor.start
  }

  let ecg: SyntheticECG
  private let state: Mutex<State>

  init(ecg: SyntheticECG, source: (any SignalSource)?) {
    self.ecg = ecg
    state = Mutex(State(source: source))
  }

  /// Samples sent so far.
  var samplesSent: Int { state.withLock { $0.nextSample } }

  /// Sends `source` from the next sample on.
  func setSource(_ source: any SignalSource) {
    state.withLock { $0.source = source }
  }

  /// The number and value of the next sample, or `nil` when the source has ended.
  func next() -> (index: Int, value: Double)? {
    state.withLock { state in
      let n = state.nextSample
      if var source = state.source {
        guard let value = source.value(at: Double(n) / ecg.sampleRate) else { return nil }
        state.source = source
        return (n, value)
      }
      if n < state.bufferStart || n >= state.bufferStart + state.buffer.count {
        state.bufferStart = n
        state.buffer = ecg.samples(n..<(n + max(1, Int(ecg.sampleRate))), from: &state.beats)
      }
      return (n, state.buffer[n - state.bufferStart])
    }
  }

  /// Sample `index` went out: the next one follows it.
  func sent(_ index: Int) {
    state.withLock { $0.nextSample = index + 1 }
  }
}
