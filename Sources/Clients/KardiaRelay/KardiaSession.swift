/// What the analysis server does with one WebSocket connection's text frames:
/// events go into a sliding window, every `interval`-th accepted one is
/// answered with the window's analysis, and a refused frame is answered at
/// once with what was wrong.
struct KardiaSession {
  private var window: ECGWindow
  private let interval: Int
  private var accepted = 0

  init(window: Duration, interval: Int) {
    self.window = ECGWindow(length: window)
    self.interval = max(1, interval)
  }

  /// The reply to one text frame, if it gets one.
  mutating func receive(_ text: String) -> String? {
    switch KardiaWire.parseEvent(text) {
    case .failure(let failure):
      return KardiaWire.failure(failure.error)
    case .success(let event):
      do {
        try window.append(amplitude: event.amplitude, at: event.time)
      } catch {
        return KardiaWire.failure(
          "\"time\" \(KardiaWire.format(event.time)) is before the previous sample's (\(KardiaWire.format(error.latest)))"
        )
      }
      accepted += 1
      guard accepted % interval == 0 else { return nil }
      return KardiaWire.analysis(window.analysis(), time: event.time)
    }
  }

  /// A reply for a frame that is not text.
  static func binaryRefusal() -> String {
    KardiaWire.failure("binary frames are not read: send each event as a JSON text frame")
  }
}
