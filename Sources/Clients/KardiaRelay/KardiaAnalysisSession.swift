/// What the analysis server does with one connection's `message` events:
/// samples go into a sliding window, every `interval`-th accepted one is
/// answered with the window's analysis on `node.js`, and a refused one is
/// answered at once on `/error` with what was wrong.
struct KardiaAnalysisSession {
  private var window: ECGWindow
  private let length: Duration
  private let interval: Int
  private var accepted = 0

  init(window: Duration, interval: Int) {
    self.window = ECGWindow(length: window)
    length = window
    self.interval = max(1, interval)
  }

  /// The answer to one `message` event's arguments, if it gets one.
  mutating func receive(_ arguments: [JSONValue]) -> SocketIOPacket? {
    switch KardiaWire.parseSample(arguments) {
    case .failure(let failure):
      return KardiaWire.failure(failure.error, event: KardiaWire.sampleEvent)
    case .success(let sample):
      do {
        try window.append(amplitude: sample.amplitude, at: sample.time)
      } catch {
        return KardiaWire.failure(
          "\"time\" \(KardiaWire.format(sample.time)) is before the previous sample's (\(KardiaWire.format(error.latest)))",
          event: KardiaWire.sampleEvent)
      }
      accepted += 1
      guard accepted % interval == 0 else { return nil }
      return KardiaWire.analysis(window.analysis(), time: sample.time)
    }
  }

  /// The board disconnected (`/BLEDisconnect`): its stream ended, so the next
  /// sample starts a new window (and may start the clock over).
  mutating func bleDisconnected() {
    window = ECGWindow(length: length)
    accepted = 0
  }
}
