#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One phasic skin conductance response (SCR): a rise of conductance after
/// a stimulus that decays back to the tonic level.
///
/// Shaped as the difference of two exponentials (rise and recovery time
/// constants), scaled so that its peak equals `amplitude`.
public struct SkinConductanceResponse: Hashable, Sendable {
  /// When the response begins (seconds from the start of the signal).
  public var onset: Double
  /// Peak height above the tonic level, in µS.
  public var amplitude: Double
  /// Rise time constant, in seconds.
  public var riseTime: Double
  /// Recovery (decay) time constant, in seconds.
  public var recoveryTime: Double

  public init(onset: Double, amplitude: Double = 0.3, riseTime: Double = 0.75, recoveryTime: Double = 4) {
    self.onset = onset
    self.amplitude = amplitude
    self.riseTime = max(0.01, riseTime)
    self.recoveryTime = max(self.riseTime * 1.01, recoveryTime)
  }

  /// Seconds from onset to the peak.
  public var timeToPeak: Double {
    log(recoveryTime / riseTime) * riseTime * recoveryTime / (recoveryTime - riseTime)
  }

  /// The response's contribution `time` seconds after the start of the signal, in µS.
  public func value(at time: Double) -> Double {
    let dt = time - onset
    guard dt > 0 else { return 0 }
    let peak = timeToPeak
    let scale = exp(-peak / recoveryTime) - exp(-peak / riseTime)
    return amplitude * (exp(-dt / recoveryTime) - exp(-dt / riseTime)) / scale
  }
}
