/// A small, fast, seeded random number generator (SplitMix64), so that every
/// "random" signal is reproducible from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
  private var state: UInt64

  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    return Self.mix(state)
  }

  /// The SplitMix64 finaliser: a well-spread 64-bit hash of `value`.
  public static func mix(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A uniform value in [0, 1) that depends only on `seed` and `index`.
  public static func unit(seed: UInt64, index: UInt64) -> Double {
    Double(mix(seed &+ mix(index)) >> 11) / Double(1 << 53)
  }

  /// A standard normal value (Box–Muller) that depends only on `seed` and `index`.
  /// For values taken in order, `GaussianStream` costs a fifth as much.
  public static func gaussian(seed: UInt64, index: UInt64) -> Double {
    let u1 = max(unit(seed: seed, index: index &* 2), Double.leastNonzeroMagnitude)
    return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * unit(seed: seed, index: index &* 2 &+ 1))
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
