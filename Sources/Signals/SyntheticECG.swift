/// A synthetic ECG: each beat a sum of Gaussian P, Q, R, S and T waves placed
/// by the beat's phase, beats spaced by RR intervals around the heart rate,
/// with seeded noise and, during arrhythmia episodes, irregular RR intervals
/// (as in atrial fibrillation: no P wave, RR varying by up to ±35 %).
///
/// Deterministic: the same configuration gives the same samples, so a test
/// can compute what the device must have sent.
public struct SyntheticECG: Sendable, Hashable {
  /// Samples per second.
  public var sampleRate: Double
  /// Mean heart rate in beats per minute.
  public var heartRate: Double
  /// Standard deviation of additive noise, in mV.
  public var noise: Double
  /// Times (seconds from the start) during which the rhythm is irregular.
  public var arrhythmiaEpisodes: [ClosedRange<Double>]
  /// Seeds the noise and the irregular beats.
  public var seed: UInt64

  public init(
    sampleRate: Double = 100, heartRate: Double = 72, noise: Double = 0.01,
    arrhythmiaEpisodes: [ClosedRange<Double>] = [], seed: UInt64 = 1
  ) {
    self.sampleRate = sampleRate
    self.heartRate = heartRate
    self.noise = noise
    self.arrhythmiaEpisodes = arrhythmiaEpisodes
    self.seed = seed
  }

  /// One wave of a beat: centre as a fraction of the RR interval, width, amplitude in mV.
  private static let waves: [(centre: Double, width: Double, amplitude: Double, isP: Bool)] = [
    (0.10, 0.025, 0.15, true),  // P
    (0.22, 0.010, -0.12, false),  // Q
    (0.25, 0.012, 1.20, false),  // R
    (0.28, 0.012, -0.25, false),  // S
    (0.55, 0.045, 0.30, false),  // T
  ]

  /// A place in the sequence of beats: beat `index` starts at `time`
  /// seconds. Computing on from one gives the same beats as from the start.
  public struct BeatCursor: Sendable, Hashable {
    public var index: UInt64
    public var time: Double
    /// The first beat, at 0 s.
    public static let start = BeatCursor(index: 0, time: 0)
  }

  /// The start times of the beats up to `end` seconds, and whether each is irregular.
  public func beats(until end: Double) -> [(start: Double, rr: Double, irregular: Bool)] {
    beats(from: .start, until: end)
  }

  /// The beats from `cursor`'s on, up to `end` seconds.
  private func beats(from cursor: BeatCursor, until end: Double) -> [(start: Double, rr: Double, irregular: Bool)] {
    var beats: [(Double, Double, Bool)] = []
    var time = cursor.time
    var index = cursor.index
    let mean = 60.0 / heartRate
    while time <= end {
      let irregular = arrhythmiaEpisodes.contains { $0.contains(time) }
      let jitter = Self.unit(seed &+ 0x5EED, index) * 2 - 1  // −1…1
      let rr = irregular ? mean * (1 + 0.35 * jitter) : mean * (1 + 0.02 * jitter)
      beats.append((time, rr, irregular))
      time += rr
      index += 1
    }
    return beats
  }

  /// The times (seconds) of the R peaks up to `end`.
  public func rPeaks(until end: Double) -> [Double] {
    beats(until: end).map { $0.start + 0.25 * $0.rr }.filter { $0 <= end }
  }

  /// Samples `range` (sample indices), in mV.
  public func samples(_ range: Range<Int>) -> [Double] {
    var cursor = BeatCursor.start
    return samples(range, from: &cursor)
  }

  /// Samples `range` as `samples(_:)` does, computing the beats from
  /// `cursor` on rather than from the first: a caller that asks for
  /// consecutive ranges keeps the cursor, so each costs the same however late
  /// it is (from the start, the beats before it are summed again each time).
  /// Moves `cursor` on to where the next range can start from; a cursor
  /// beyond `range` is started again from the first beat.
  public func samples(_ range: Range<Int>, from cursor: inout BeatCursor) -> [Double] {
    guard !range.isEmpty else { return [] }
    let first = Double(range.lowerBound) / sampleRate
    let end = Double(range.upperBound) / sampleRate
    var beats = beats(from: cursor, until: end + 2)
    // The beat before the one holding the first sample must be there: its T
    // wave can reach into the next beat.
    if cursor.index > 0, beats.count < 2 || beats[1].start > first {
      cursor = .start
      beats = self.beats(from: cursor, until: end + 2)
    }
    defer {
      // The next range starts at `end`: keep the beat before the one holding it.
      if let holding = beats.lastIndex(where: { $0.start <= end }), holding >= 1 {
        cursor = BeatCursor(index: cursor.index + UInt64(holding - 1), time: beats[holding - 1].start)
      }
    }
    var beatIndex = 0
    return range.map { n in
      let t = Double(n) / sampleRate
      while beatIndex + 1 < beats.count, beats[beatIndex + 1].start <= t { beatIndex += 1 }
      var value = 0.0
      // The tail of the previous beat (its T wave) can reach into this one.
      for b in max(0, beatIndex - 1)...beatIndex {
        let beat = beats[b]
        let phase = (t - beat.start) / beat.rr
        for wave in Self.waves where !(wave.isP && beat.irregular) {
          let d = (phase - wave.centre) / wave.width
          if abs(d) < 6 { value += wave.amplitude * Self.gaussian(d) }
        }
      }
      return value + noise * Self.normal(seed, UInt64(n))
    }
  }

  /// The text a sample travels as: decimal, four places, at most 20 bytes.
  public static func text(_ amplitude: Double) -> String {
    String(decoding: utf8Text(amplitude), as: UTF8.self)
  }

  /// `text(_:)` as the bytes a notification carries, made without a `String`.
  public static func utf8Text(_ amplitude: Double) -> [UInt8] {
    let scaled = (amplitude * 10_000).rounded()
    var magnitude = Int(abs(scaled))
    var bytes: [UInt8] = []
    bytes.reserveCapacity(12)
    // Digits from the last: four decimals, the point, then the integer part.
    for _ in 0..<4 {
      bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
      magnitude /= 10
    }
    bytes.append(UInt8(ascii: "."))
    repeat {
      bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
      magnitude /= 10
    } while magnitude > 0
    if scaled < 0 { bytes.append(UInt8(ascii: "-")) }
    bytes.reverse()
    return bytes
  }

  private static func gaussian(_ d: Double) -> Double {
    // exp(-d²/2) without Foundation.
    var x = -d * d / 2
    var result = 1.0
    var halvings = 0
    while x < -1 {
      x /= 2
      halvings += 1
    }
    var term = 1.0
    for k in 1...12 {
      term *= x / Double(k)
      result += term
    }
    for _ in 0..<halvings { result *= result }
    return result
  }

  /// A uniform value in [0, 1) from (seed, index): SplitMix64.
  static func unit(_ seed: UInt64, _ index: UInt64) -> Double {
    var z = seed &+ index &* 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    z ^= z >> 31
    return Double(z >> 11) / Double(1 << 53)
  }

  /// A standard normal value from (seed, index): the sum of twelve uniforms, less 6.
  static func normal(_ seed: UInt64, _ index: UInt64) -> Double {
    var sum = 0.0
    for k in 0..<12 { sum += unit(seed, index &* 12 &+ UInt64(k)) }
    return sum - 6
  }
}
