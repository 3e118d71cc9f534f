/// What the client must observe in an end-to-end run for it to pass.
public struct Expectation: Sendable {
  /// A check on what the client observed.
  public enum Check: Hashable, Sendable {
    /// The client connected within a bound from the start.
    case connected(within: Duration)
    /// A stream's samples: how many, at what rate, which values, and the
    /// longest time allowed between two consecutive ones (no lost packets).
    case samples(
      stream: String, count: ClosedRange<Int>?, rate: Tolerance?, minimum: Double?, maximum: Double?, mean: Tolerance?,
      maxGap: Duration? = nil)
    /// A figure the client derives (`heart-rate`, …) within a tolerance.
    case metric(String, Tolerance)
    /// How often the client saw an event (`disconnected`, `malformed`, `tag`, …).
    case event(String, count: ClosedRange<Int>)
    /// The client reported an error whose text contains this.
    case error(containing: String)
    /// The client reported no error.
    case noErrors

    // What the device saw the central do (any central: Doppel's client, or a program under `doppel test`).

    /// A central connected within a bound from the start.
    case centralConnected(within: Duration)
    /// A central subscribed to a characteristic (within a bound from the start, when given).
    case centralSubscribed(characteristic: String, within: Duration?)
    /// A central wrote a characteristic, with bytes matching a pattern when given, a number of times.
    case centralWrote(characteristic: String, pattern: WritePattern?, count: ClosedRange<Int>)
    /// After every time the link dropped, a central connected again within a
    /// bound and subscribed again to each of `subscribedAgain` within it.
    case centralReconnected(within: Duration, subscribedAgain: [String])
    /// A characteristic was still subscribed when the run ended.
    case centralStayedSubscribed(characteristic: String)
    /// The device answered no read or write with an ATT error.
    case noATTErrors
    /// The firmware understood something (a command, a script) a number of times.
    case firmwareEvent(String, count: ClosedRange<Int>)

    /// Whether the check is on what the device saw (any central), not on
    /// what Doppel's own client observed.
    public var isDeviceSide: Bool {
      switch self {
      case .centralConnected, .centralSubscribed, .centralWrote, .centralReconnected, .centralStayedSubscribed,
        .noATTErrors, .firmwareEvent:
        true
      case .connected, .samples, .metric, .event, .error, .noErrors:
        false
      }
    }
  }

  public var device: String
  public var check: Check
  public var location: SourceLocation

  public init(device: String, check: Check, location: SourceLocation) {
    self.device = device
    self.check = check
    self.location = location
  }
}

/// A target value and how far from it is still right.
public struct Tolerance: Hashable, Sendable, CustomStringConvertible {
  public var value: Double
  /// Absolute, or a fraction of `value` when `relative`.
  public var tolerance: Double
  public var relative: Bool

  public init(_ value: Double, within tolerance: Double, relative: Bool = false) {
    self.value = value
    self.tolerance = tolerance
    self.relative = relative
  }

  /// The largest distance from `value` that passes.
  public var bound: Double { relative ? abs(value) * tolerance : tolerance }

  public func accepts(_ observed: Double) -> Bool { abs(observed - value) <= bound + 1e-12 }

  public var description: String {
    relative ? "\(value) ± \(tolerance * 100)%" : "\(value) ± \(tolerance)"
  }
}

/// What written bytes must look like: a regular expression over their hex
/// digits (`hex`, e.g. `^01.{8}$`) or over their text (`text`, e.g. `^Z`).
public struct WritePattern: Hashable, Sendable, CustomStringConvertible {
  public enum Form: String, Hashable, Sendable {
    case hex
    case text
  }
  public var form: Form
  public var expression: String

  public init(_ form: Form, _ expression: String) {
    self.form = form
    self.expression = expression
  }

  /// Whether `bytes` match.
  public func matches(_ bytes: [UInt8]) -> Bool {
    let subject =
      switch form {
      case .hex:
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
          .joined()
      case .text: String(decoding: bytes, as: UTF8.self)
      }
    guard let regex = try? Regex(expression) else { return false }
    return subject.contains(regex)
  }

  public var description: String { "\(form.rawValue) /\(expression)/" }
}
