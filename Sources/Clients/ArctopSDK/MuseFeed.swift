import GATT
import Synchronization

/// What a connected headband's notifications carry, taken as they arrive:
/// on the thread that delivers each one (`NotificationStream.receiveEach`),
/// not by a task woken per notification, which cost more than decoding.
/// EEG and battery go to the raw-data listeners at once; every second of
/// EEG from the four sensors, with the motion since the last, becomes a
/// ``Window`` for the client to analyse on its own executor.
final class MuseFeed: Sendable {
  /// Which characteristic a notification came from.
  enum Source: Sendable {
    case eeg(sensor: Int)
    case acceleration, telemetry, control
  }

  /// One analysis window: 256 samples (µV) per sensor, TP9, AF7, AF8, TP10,
  /// and the acceleration's magnitudes (g) over it.
  struct Window: Sendable {
    var eeg: [[Double]]
    var motion: [Double]
  }

  private struct State {
    var buffers: [[Double]] = [[], [], [], []]
    /// Each sensor's last packet decoded, written over by its next once the
    /// listeners have let it go (no allocation per packet).
    var lastPackets: [[Double]] = [[], [], [], []]
    var motion: [Double] = []
    var malformed = 0
    var listeners: [any ArctopRawDataListener]
  }

  private let state: Mutex<State>
  private let continuation: AsyncStream<Window>.Continuation
  /// The windows, in order; it ends after `finish()`, with those taken before it.
  let windows: AsyncStream<Window>

  init(listeners: [any ArctopRawDataListener]) {
    state = Mutex(State(listeners: listeners))
    (windows, continuation) = AsyncStream.makeStream()
  }

  /// Notifications that could not be decoded.
  var malformed: Int { state.withLock { $0.malformed } }

  /// Replaces the raw-data listeners (one registered while connected).
  func setListeners(_ listeners: [any ArctopRawDataListener]) {
    state.withLock { $0.listeners = listeners }
  }

  /// Decodes one notification from `source`.
  func take(_ value: [UInt8], from source: Source) {
    do {
      switch source {
      case .eeg(let sensor):
        let (index, microvolts, listeners) = try state.withLock {
          state throws(MuseWire.MalformedPacket) -> (UInt16, [Double], [any ArctopRawDataListener]) in
          let index = try MuseWire.eeg(value, into: &state.lastPackets[sensor])
          let microvolts = state.lastPackets[sensor]
          state.buffers[sensor] += microvolts
          if state.buffers.allSatisfy({ $0.count >= 256 }) {
            // Yielded under the lock, so windows keep their order.
            continuation.yield(Window(eeg: state.buffers.map { Array($0.prefix(256)) }, motion: state.motion))
            // In place: each EEG buffer keeps its capacity (a new one grew
            // again from nothing every second). The motion's storage went
            // with the window, so emptying it makes a new one.
            for buffer in state.buffers.indices { state.buffers[buffer].removeFirst(256) }
            state.motion.removeAll(keepingCapacity: true)
          }
          return (index, microvolts, state.listeners)
        }
        for listener in listeners { listener.onEEG(sensor: sensor, packetIndex: index, microvolts: microvolts) }
      case .acceleration:
        try state.withLock { state throws(MuseWire.MalformedPacket) in
          _ = try MuseWire.acceleration(value) { sample in
            state.motion.append((sample.x * sample.x + sample.y * sample.y + sample.z * sample.z).squareRoot())
          }
        }
      case .telemetry:
        let percent = try MuseWire.batteryPercent(value)
        for listener in state.withLock({ $0.listeners }) { listener.onBattery(percent: percent) }
      case .control:
        _ = try MuseWire.controlText(value)
      }
    } catch {
      state.withLock { $0.malformed += 1 }
    }
  }

  /// Ends `windows` once those taken so far are read.
  func finish() { continuation.finish() }
}
