/// Gaussian noise around a mean, reproducible from its seed: the value at a
/// time depends only on the seed and the time, not on how often it was sampled.
public struct NoiseSignal: SignalSource, Hashable {
  public var mean: Double
  public var standardDeviation: Double
  public var seed: UInt64

  public init(mean: Double = 0, standardDeviation: Double, seed: UInt64 = 1) {
    self.mean = mean
    self.standardDeviation = max(0, standardDeviation)
    self.seed = seed
  }

  public func value(at time: Double) -> Double? {
    // Microsecond resolution keys the draw, so equal times give equal values.
    let key = UInt64(bitPattern: Int64((time * 1_000_000).rounded()))
    return mean + standardDeviation * SplitMix64.gaussian(seed: seed, index: key)
  }
}
