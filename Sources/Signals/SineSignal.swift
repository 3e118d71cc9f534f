#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `offset + amplitude · sin(2π · frequency · t + phase)`.
public struct SineSignal: SignalSource, Hashable {
  public var amplitude: Double
  /// Hertz.
  public var frequency: Double
  /// Radians.
  public var phase: Double
  public var offset: Double

  public init(amplitude: Double, frequency: Double, phase: Double = 0, offset: Double = 0) {
    self.amplitude = amplitude
    self.frequency = frequency
    self.phase = phase
    self.offset = offset
  }

  public func value(at time: Double) -> Double? {
    offset + amplitude * sin(2 * Double.pi * frequency * time + phase)
  }
}
