/// Standard normal values one after another from a seed: Marsaglia and
/// Tsang's ziggurat (128 layers) on a SplitMix64 stream. About 99 % of
/// values cost one 64-bit draw, a compare and a multiply; the rest take the
/// exact rejection steps, so the values are normal, not an approximation.
///
/// For a generator that takes its noise in order (one value per sample):
/// where a value must depend only on a seed and an index, use
/// `SplitMix64.gaussian(seed:index:)`.
public struct GaussianStream: Sendable, Hashable {
  private var random: SplitMix64

  public init(seed: UInt64) { random = SplitMix64(seed: seed) }

  /// The next value.
  public mutating func next() -> Double {
    let tables = Self.tables
    while true {
      // The layer from the low 7 bits, the signed position from the high 32:
      // no bit serves both (the classic version's flaw, reusing the same bits).
      let draw = random.next()
      let layer = Int(draw & 127)
      let position = Int32(truncatingIfNeeded: draw >> 32)
      // Inside the layer's rectangle, under the curve everywhere: taken.
      if position.magnitude < tables.bound[layer] { return Double(position) * tables.width[layer] }
      let x = Double(position) * tables.width[layer]
      if layer == 0 {
        // The tail beyond r (Marsaglia's method for a normal's tail).
        var tail: Double
        var y: Double
        repeat {
          tail = -log(uniform()) / Self.r
          y = -log(uniform())
        } while y + y < tail * tail
        return position > 0 ? Self.r + tail : -(Self.r + tail)
      }
      // The wedge between the rectangle and the curve.
      let f = tables.height[layer] + uniform() * (tables.height[layer - 1] - tables.height[layer])
      if f < exp(-0.5 * x * x) { return x }
    }
  }

  /// A uniform value in (0, 1).
  private mutating func uniform() -> Double {
    (Double(random.next() >> 11) + 0.5) / Double(1 << 53)
  }

  /// Where the base layer's rectangle ends, and the layers' common area.
  static let r = 3.442619855899
  private static let area = 9.91256303526217e-3

  /// Per layer: the bound under which a position is taken at once, the
  /// scale from a position to x, and the curve's height at the layer's edge.
  private struct Tables: Sendable {
    var bound = [UInt32](repeating: 0, count: 128)
    var width = [Double](repeating: 0, count: 128)
    var height = [Double](repeating: 0, count: 128)
  }

  private static let tables: Tables = {
    var t = Tables()
    let scale = 2_147_483_648.0  // 2^31: positions are signed 32-bit
    var edge = r
    var previous = r
    let q = area / exp(-0.5 * edge * edge)
    t.bound[0] = UInt32(edge / q * scale)
    t.bound[1] = 0
    t.width[0] = q / scale
    t.width[127] = edge / scale
    t.height[0] = 1
    t.height[127] = exp(-0.5 * edge * edge)
    for layer in stride(from: 126, through: 1, by: -1) {
      edge = (-2 * log(area / edge + exp(-0.5 * edge * edge))).squareRoot()
      t.bound[layer + 1] = UInt32(edge / previous * scale)
      previous = edge
      t.height[layer] = exp(-0.5 * edge * edge)
      t.width[layer] = edge / scale
    }
    return t
  }()
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
