import Foundation
import Signals
import Testing

/// The ziggurat's values against the normal distribution: a wrong table, a
/// wrong wedge test or a wrong tail shows as a distribution that is not
/// normal, in the bins (χ²) or in the tails.
@Suite struct GaussianStreamTests {
  /// The standard normal's distribution function.
  private static func normalCDF(_ x: Double) -> Double { 0.5 * erfc(-x / 2.squareRoot()) }

  private static func values(seed: UInt64, count: Int) -> [Double] {
    var stream = GaussianStream(seed: seed)
    return (0..<count).map { _ in stream.next() }
  }

  @Test func theSameSeedGivesTheSameValues() {
    #expect(Self.values(seed: 42, count: 1_000) == Self.values(seed: 42, count: 1_000))
    #expect(Self.values(seed: 42, count: 1_000) != Self.values(seed: 43, count: 1_000))
  }

  @Test func meanAndVarianceAreThoseOfAStandardNormal() {
    let values = Self.values(seed: 7, count: 1_000_000)
    let mean = values.reduce(0, +) / Double(values.count)
    let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
    // Standard errors: 0.001 for the mean, 0.0014 for the variance.
    #expect(abs(mean) < 0.005)
    #expect(abs(variance - 1) < 0.007)
  }

  /// 128 bins of equal probability; χ² with 127 degrees of freedom is under
  /// 173 in 99.5 % of samples of a normal distribution.
  @Test func binsOfEqualProbabilityFillEvenly() {
    let bins = 128
    var counts = [Int](repeating: 0, count: bins)
    let values = Self.values(seed: 11, count: 1_000_000)
    for value in values { counts[min(bins - 1, Int(Self.normalCDF(value) * Double(bins)))] += 1 }
    let expected = Double(values.count) / Double(bins)
    let chiSquare = counts.reduce(0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
    #expect(chiSquare < 173, "χ² \(chiSquare) over \(bins) bins")
  }

  /// Beyond the base layer's edge (3.44), where only the tail's own method
  /// makes values: 2 · (1 − Φ(3.4426)) = 0.0576 % of them, each side alike.
  @Test func theTailsHaveTheirShare() {
    let values = Self.values(seed: 3, count: 2_000_000)
    let edge = 3.442619855899
    let expected = Double(values.count) * (1 - Self.normalCDF(edge))
    let above = Double(values.filter { $0 > edge }.count)
    let below = Double(values.filter { $0 < -edge }.count)
    // About 576 each side, a standard deviation of 24: within five.
    #expect(abs(above - expected) < 5 * expected.squareRoot(), "\(above) above, \(expected) expected")
    #expect(abs(below - expected) < 5 * expected.squareRoot(), "\(below) below, \(expected) expected")
    // And beyond 4.5, 3.4 per million each side: about 14.
    let far = Double(values.filter { abs($0) > 4.5 }.count)
    #expect(far >= 2 && far <= 30, "\(far) beyond 4.5")
  }
}
