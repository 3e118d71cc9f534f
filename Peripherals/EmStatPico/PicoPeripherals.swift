import Synchronization

/// What a running script shares with the model beyond the cell: the GPIO
/// pins, the real-time clock, the wake-up events of `hibernate`, and a way
/// to report firmware events (`gpio`, `hibernate`, `wake`) to the host.
struct PicoPeripherals: Sendable {
  var pins = GPIOPins()
  var clock = RealTimeClock()
  var wake = WakeEvents()
  var event: @Sendable (_ name: String, _ detail: String) async -> Void = { _, _ in }
}

/// The wake-up sources of `hibernate` (its first argument's bits) that have
/// fired since the script went to sleep: communication (a line from the
/// host) and the WAKE pin. The timer is the script's own.
final class WakeEvents: Sendable {
  static let communication: UInt32 = 0x01
  static let wakePin: UInt32 = 0x02
  static let timer: UInt32 = 0x04

  private let fired = Mutex<UInt32>(0)

  /// Records that `source` fired.
  func fire(_ source: UInt32) { fired.withLock { $0 |= source } }
  /// Forgets earlier events (as the script goes to sleep).
  func clear() { fired.withLock { $0 = 0 } }
  /// Whether one of `sources` fired.
  func any(of sources: UInt32) -> Bool { fired.withLock { $0 & sources != 0 } }
}
