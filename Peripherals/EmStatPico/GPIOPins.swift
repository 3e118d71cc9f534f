import Synchronization

/// The Pico's ten GPIO pins (GPIO0–GPIO9) as a script and a scenario see
/// them: a script configures each pin (`set_gpio_cfg mask mode`: 0 input,
/// 1 output, 2 a peripheral function), sets outputs (`set_gpio`,
/// `set_gpio_msk`), enables pull-ups (`set_gpio_pullup`) and reads all pins
/// (`get_gpio`); a scenario drives inputs and observes outputs.
///
/// A pin reads its output level when it is an output; as an input, the
/// level a scenario drives, else high with its pull-up, else low. Pins in
/// peripheral mode read low and ignore outputs. Shared between the model
/// and its running script, so a scenario's change is seen at the script's
/// next `get_gpio`.
public final class GPIOPins: Sendable {
  /// The number of pins.
  public static let count = 10
  /// Every pin's bit.
  public static let allPins: UInt32 = (1 << UInt32(count)) - 1

  /// How a pin is configured (`set_gpio_cfg`'s mode).
  public enum Mode: Int, Sendable {
    case input = 0
    case output = 1
    case peripheral = 2
  }

  private struct State {
    var outputPins: UInt32 = 0
    var peripheralPins: UInt32 = 0
    var outputLevels: UInt32 = 0
    var pullUps: UInt32 = 0
    var drivenPins: UInt32 = 0
    var drivenLevels: UInt32 = 0
  }

  private let state = Mutex(State())

  public init() {}

  /// `set_gpio_cfg mask mode`.
  func configure(_ mask: UInt32, as mode: Mode) {
    let mask = mask & Self.allPins
    state.withLock {
      $0.outputPins &= ~mask
      $0.peripheralPins &= ~mask
      switch mode {
      case .input: break
      case .output: $0.outputPins |= mask
      case .peripheral: $0.peripheralPins |= mask
      }
    }
  }

  /// `set_gpio value`: every output pin takes its bit of `value`. Returns the outputs after.
  func setOutputs(_ value: UInt32) -> UInt32 {
    state.withLock {
      $0.outputLevels = value & Self.allPins
      return $0.outputLevels & $0.outputPins
    }
  }

  /// `set_gpio_msk mask level`: the output pins in `mask` go high (level ≠ 0) or low. Returns the outputs after.
  func setOutputs(_ mask: UInt32, high: Bool) -> UInt32 {
    state.withLock {
      if high { $0.outputLevels |= mask & Self.allPins } else { $0.outputLevels &= ~mask }
      return $0.outputLevels & $0.outputPins
    }
  }

  /// `set_gpio_pullup mask enable`.
  func setPullUps(_ mask: UInt32, enabled: Bool) {
    state.withLock {
      if enabled { $0.pullUps |= mask & Self.allPins } else { $0.pullUps &= ~mask }
    }
  }

  /// `get_gpio`: every pin's level, bit n for GPIOn.
  func read() -> UInt32 {
    state.withLock { s in
      let inputs = Self.allPins & ~s.outputPins & ~s.peripheralPins
      let inputLevels = (s.drivenLevels & s.drivenPins) | (s.pullUps & ~s.drivenPins)
      return (s.outputLevels & s.outputPins) | (inputLevels & inputs)
    }
  }

  /// The levels of the pins configured as outputs (bit n for GPIOn).
  public var outputs: UInt32 { state.withLock { $0.outputLevels & $0.outputPins } }

  /// Drives `pin` from outside: high, low, or `nil` to let it go (pull-up or low).
  public func drive(_ pin: Int, high: Bool?) {
    guard (0..<Self.count).contains(pin) else { return }
    let bit = UInt32(1) << UInt32(pin)
    state.withLock {
      if let high {
        $0.drivenPins |= bit
        if high { $0.drivenLevels |= bit } else { $0.drivenLevels &= ~bit }
      } else {
        $0.drivenPins &= ~bit
      }
    }
  }
}
