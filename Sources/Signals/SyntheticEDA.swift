#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Synthetic electrodermal activity (skin conductance, µS): a tonic level
/// that drifts linearly, phasic skin conductance responses at given times
/// and, optionally, spontaneous ones at seeded random times, with seeded noise.
///
/// Deterministic: the same configuration gives the same values.
public struct SyntheticEDA: SignalSource, Hashable {
  /// The tonic (skin conductance) level at time zero, in µS.
  public var tonicLevel: Double
  /// Linear change of the tonic level, in µS per minute.
  public var tonicDrift: Double
  /// Responses at known times (e.g. a scenario's stimuli).
  public var responses: [SkinConductanceResponse]
  /// Mean number of spontaneous responses per minute (a Poisson process); zero for none.
  public var spontaneousRate: Double
  /// Standard deviation of additive Gaussian noise, in µS.
  public var noise: Double
  public var seed: UInt64

  /// Spontaneous responses generated so far that can still contribute.
  private var spontaneous: [SkinConductanceResponse] = []
  /// The next spontaneous response not yet in `spontaneous`, and its index.
  private var nextSpontaneous: SkinConductanceResponse?
  private var nextSpontaneousIndex: UInt64 = 0

  /// How long after its onset a response is still summed.
  private static let horizon = 60.0

  public init(
    tonicLevel: Double = 2, tonicDrift: Double = 0, responses: [SkinConductanceResponse] = [],
    spontaneousRate: Double = 0, noise: Double = 0.005, seed: UInt64 = 1
  ) {
    self.tonicLevel = tonicLevel
    self.tonicDrift = tonicDrift
    self.responses = responses.sorted { $0.onset < $1.onset }
    self.spontaneousRate = max(0, spontaneousRate)
    self.noise = max(0, noise)
    self.seed = seed
  }

  /// The spontaneous responses with onsets at or before `end` seconds.
  public func spontaneousResponses(until end: Double) -> [SkinConductanceResponse] {
    var result: [SkinConductanceResponse] = []
    var onset = 0.0
    var index: UInt64 = 0
    while let next = spontaneousResponse(after: onset, index: index), next.onset <= end {
      result.append(next)
      onset = next.onset
      index += 1
    }
    return result
  }

  /// The spontaneous response following one at `previous` seconds: an
  /// exponential waiting time, amplitude uniform in 0.05…0.5 µS.
  private func spontaneousResponse(after previous: Double, index: UInt64) -> SkinConductanceResponse? {
    guard spontaneousRate > 0 else { return nil }
    let u = max(SplitMix64.unit(seed: seed &+ 0x5C5, index: index &* 2), 1e-12)
    let wait = -log(u) * 60 / spontaneousRate
    let size = SplitMix64.unit(seed: seed &+ 0x5C5, index: index &* 2 &+ 1)
    return SkinConductanceResponse(onset: previous + wait, amplitude: 0.05 + 0.45 * size)
  }

  public mutating func value(at time: Double) -> Double? {
    var value = tonicLevel + tonicDrift * time / 60
    for response in responses {
      if response.onset > time { break }
      if response.onset > time - Self.horizon { value += response.value(at: time) }
    }
    if spontaneousRate > 0 {
      if nextSpontaneous == nil, nextSpontaneousIndex == 0 {
        nextSpontaneous = spontaneousResponse(after: 0, index: 0)
      }
      while let response = nextSpontaneous, response.onset <= time {
        spontaneous.append(response)
        nextSpontaneousIndex += 1
        nextSpontaneous = spontaneousResponse(after: response.onset, index: nextSpontaneousIndex)
      }
      spontaneous.removeAll { $0.onset <= time - Self.horizon }
      for response in spontaneous where response.onset <= time { value += response.value(at: time) }
    }
    if noise > 0 {
      let key = UInt64(bitPattern: Int64((time * 1_000_000).rounded()))
      value += noise * SplitMix64.gaussian(seed: seed, index: key)
    }
    return max(0, value)
  }
}
