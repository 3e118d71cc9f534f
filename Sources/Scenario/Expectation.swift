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
