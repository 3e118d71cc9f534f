import Foundation
import Signals

/// Synthetic EEG for one electrode, in µV at 256 Hz, sample by sample:
/// a 1/f background, an alpha rhythm that rises when the eyes close, blinks
/// on the forehead electrodes, bursts of muscle activity behind the ears,
/// optional line noise, and what an electrode off the skin shows (a rail or
/// a flat line).
///
/// Blinks and muscle bursts come from a schedule seeded per headband, so
/// AF7 and AF8 blink together; the background and the rhythm are seeded per
/// channel. The same seeds and conditions give the same samples.
public struct SyntheticEEG: Sendable {
  /// What the wearer and the headband do now, shared by every channel.
  public struct Conditions: Hashable, Sendable {
    /// 0 with the eyes open, 1 closed; in between while they close.
    public var eyesClosed: Double = 0
    /// Whether the electrodes touch the skin.
    public var onHead = true
    /// Whether a muscle burst is forced now (a scenario's `muscle` action).
    public var muscle = false

    public init(eyesClosed: Double = 0, onHead: Bool = true, muscle: Bool = false) {
      self.eyesClosed = eyesClosed
      self.onHead = onHead
      self.muscle = muscle
    }
  }

  /// What an electrode off the skin shows.
  public enum OffHead: String, Hashable, Sendable, CaseIterable {
    /// Held at the top of the range (code 4095, about +1000 µV).
    case rail
    /// A flat line at 0 µV.
    case flat
  }

  /// The wearer's parameters, the same for every channel of a headband.
  public struct Parameters: Hashable, Sendable {
    /// Standard deviation of the 1/f background, µV.
    public var background = 10.0
    /// Alpha amplitude with the eyes open and closed, µV (behind the ears; less on the forehead).
    public var alphaOpen = 4.0
    public var alphaClosed = 20.0
    /// The alpha peak, Hz (8–12).
    public var alphaFrequency = 10.0
    /// Blinks per minute with the eyes open, and their height on AF7, µV.
    public var blinksPerMinute = 15.0
    public var blinkAmplitude = 150.0
    /// Muscle bursts per minute, and their standard deviation, µV.
    public var musclePerMinute = 0.5
    public var muscleAmplitude = 30.0
    /// Line noise amplitude, µV (0: none), and its frequency, Hz.
    public var lineNoise = 0.0
    public var lineFrequency = 50.0
    public var offHead = OffHead.rail

    public init() {}
  }

  public static let sampleRate = 256.0
  public let channel: MuseChannel
  public let parameters: Parameters
  private let seed: UInt64
  private let scheduleSeed: UInt64
  private var index: UInt64 = 0
  private var pink = PinkFilter()
  /// The background's white noise, a value per sample, in order.
  private var white: GaussianStream
  private var alphaPhase = 0.0
  /// sin and cos of the alpha rhythm's phase, of its frequency's wander and
  /// of its waxing and waning, turned sample by sample (a sine per sample
  /// each was a third of the generator's time) and set exactly once a
  /// second, so rounding cannot build up.
  private var alpha = Phasor()
  private var wander = Phasor()
  private var waxing = Phasor()
  /// The sample `wander` and `waxing` stand at (they are set exactly after a gap).
  private var slowAt: UInt64?
  /// One sample's turn of the alpha rhythm at its mean frequency, as a
  /// phasor and as an angle.
  private let alphaStep: Phasor
  private let alphaAngle: Double
  /// Whether this is the AUX channel (asked per sample: a stored answer,
  /// where comparing the channel is a call).
  private let isAux: Bool
  private var blinks: EventSchedule
  private var bursts: EventSchedule
  /// This channel's share of the alpha rhythm, the blinks and the muscle
  /// bursts (by where the electrode sits), worked out once.
  private let alphaWeight: Double
  private let blinkWeight: Double
  private let muscleWeight: Double

  /// - Parameters:
  ///   - seed: this channel's background and rhythm.
  ///   - scheduleSeed: the headband's blinks and muscle bursts (the same for every channel).
  public init(channel: MuseChannel, parameters: Parameters = Parameters(), seed: UInt64, scheduleSeed: UInt64) {
    self.channel = channel
    self.parameters = parameters
    self.seed = seed
    self.scheduleSeed = scheduleSeed
    white = GaussianStream(seed: seed)
    blinks = EventSchedule(perMinute: parameters.blinksPerMinute, length: 0.3, seed: scheduleSeed)
    bursts = EventSchedule(perMinute: parameters.musclePerMinute, length: 1.0, seed: scheduleSeed ^ 0x5EED)
    alphaAngle = 2 * .pi * parameters.alphaFrequency / Self.sampleRate
    alphaStep = Phasor(angle: alphaAngle)
    isAux = channel == .aux
    alphaWeight = channel.isTemporal ? 1.0 : 0.6
    blinkWeight = channel.isFrontal ? (channel == .af7 ? 1 : 0.9) * parameters.blinkAmplitude : 0
    muscleWeight = (channel.isTemporal ? 1.0 : 0.3) * parameters.muscleAmplitude
  }

  /// One sample's turn of the wander (0.05 Hz) and of the waxing (0.2 Hz).
  private static let wanderStep = Phasor(angle: 2 * .pi * 0.05 / sampleRate)
  private static let waxingStep = Phasor(angle: 2 * .pi * 0.2 / sampleRate)
  /// One sample's turn of the alpha rhythm per unit of the wander (±0.3 Hz at its extremes).
  private static let wanderAngle = 2 * .pi * 0.3 / sampleRate

  /// Where the next sample stands in the headband's blinks and muscle
  /// bursts: each 0 outside one, 0…1…0 over it.
  struct Events: Hashable, Sendable {
    var blink: Double
    var burst: Double
  }

  /// The blinks and bursts at the next sample. Every channel of a headband
  /// has the same schedule (one seed), so one channel's serve all of them
  /// at the same sample (`next(_:events:)`).
  mutating func nextEvents() -> Events {
    let t = Double(index) / Self.sampleRate
    return Events(blink: blinks.shape(at: t), burst: bursts.shape(at: t))
  }

  /// The next sample, µV, under `conditions`.
  public mutating func next(_ conditions: Conditions) -> Double {
    next(conditions, events: nextEvents())
  }

  /// The next sample, µV, under `conditions`, with the blinks and bursts
  /// another channel of the same schedule took at this sample. This
  /// channel's schedule stays where it was; it catches up when next asked
  /// (a schedule's shape depends only on the time).
  mutating func next(_ conditions: Conditions, events: Events) -> Double {
    let n = index
    index += 1
    let t = Double(n) / Self.sampleRate
    let background = pink.next(white.next()) * parameters.background
    let (blink, burst) = (events.blink, events.burst)
    guard conditions.onHead else {
      switch parameters.offHead {
      case .rail: return 1000
      case .flat: return 0
      }
    }
    if isAux { return background * 0.2 + line(t) }
    let amplitude =
      alphaWeight * (parameters.alphaOpen + (parameters.alphaClosed - parameters.alphaOpen) * conditions.eyesClosed)
    let exact = n % UInt64(Self.sampleRate) == 0
    if exact || slowAt != n &- 1 {
      wander = Phasor(angle: 2 * .pi * 0.05 * t + Double(seed % 7))
      waxing = Phasor(angle: 2 * .pi * 0.2 * t + Double(seed % 5))
    } else {
      wander.turn(by: Self.wanderStep)
      waxing.turn(by: Self.waxingStep)
    }
    slowAt = n
    // The alpha frequency wanders slowly within ±0.3 Hz: this sample's
    // turn is the mean frequency's and the wander's small angle x.
    let x = Self.wanderAngle * wander.sin
    alphaPhase += alphaAngle + x
    if alphaPhase > 2 * .pi { alphaPhase -= 2 * .pi }
    if exact {
      alpha = Phasor(angle: alphaPhase)
    } else {
      // |x| < 0.008 rad, where the series below are exact to 1e-18 (the
      // factorials' inverses multiplied: a division each was most of the turn).
      let x2 = x * x
      alpha.turn(by: alphaStep)
      alpha.turn(
        by: Phasor(
          cos: 1 - x2 * 0.5 + x2 * x2 * Self.inverse24, sin: x * (1 - x2 * Self.inverse6 + x2 * x2 * Self.inverse120)))
    }
    let waxing = 1 + 0.3 * self.waxing.sin
    var value = background + amplitude * waxing * alpha.sin + line(t)
    if blink > 0, conditions.eyesClosed < 0.5 { value += blinkWeight * blink }
    if burst > 0 || conditions.muscle {
      value += muscleWeight * SplitMix64.gaussian(seed: seed ^ 0xA5A5, index: n)
    }
    return value
  }

  private static let (inverse6, inverse24, inverse120) = (1.0 / 6, 1.0 / 24, 1.0 / 120)

  private func line(_ t: Double) -> Double {
    parameters.lineNoise == 0 ? 0 : parameters.lineNoise * sin(2 * .pi * parameters.lineFrequency * t)
  }

}

/// A point on the unit circle, turned step by step in place of computing a
/// sine and a cosine each time.
struct Phasor: Hashable, Sendable {
  var cos = 1.0
  var sin = 0.0

  init(cos: Double = 1, sin: Double = 0) {
    self.cos = cos
    self.sin = sin
  }

  init(angle: Double) {
    cos = Foundation.cos(angle)
    sin = Foundation.sin(angle)
  }

  /// Adds `step`'s angle.
  mutating func turn(by step: Phasor) {
    (cos, sin) = (cos * step.cos - sin * step.sin, sin * step.cos + cos * step.sin)
  }
}

/// Unit-variance 1/f noise from white noise: Paul Kellet's filter, normalised.
struct PinkFilter: Hashable, Sendable {
  private var b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0, b4 = 0.0, b5 = 0.0, b6 = 0.0

  mutating func next(_ white: Double) -> Double {
    b0 = 0.99886 * b0 + white * 0.0555179
    b1 = 0.99332 * b1 + white * 0.0750759
    b2 = 0.96900 * b2 + white * 0.1538520
    b3 = 0.86650 * b3 + white * 0.3104856
    b4 = 0.55000 * b4 + white * 0.5329522
    b5 = -0.7616 * b5 - white * 0.0168980
    let value = b0 + b1 + b2 + b3 + b4 + b5 + b6 + white * 0.5362
    b6 = white * 0.115926
    // The filter's output has a standard deviation of about 3.
    return value / 3
  }
}

/// Events at random times (exponential gaps at a rate per minute), each
/// lasting `length` seconds, shaped as a raised cosine: blinks, muscle bursts.
struct EventSchedule: Hashable, Sendable {
  let perMinute: Double
  let length: Double
  let seed: UInt64
  private var count: UInt64 = 0
  private var onset: Double

  init(perMinute: Double, length: Double, seed: UInt64) {
    self.perMinute = perMinute
    self.length = length
    self.seed = seed
    onset = .infinity
    if perMinute > 0 { onset = gap() }
  }

  /// 0 outside an event; within one, 0…1…0 over its length. Times must not decrease.
  mutating func shape(at t: Double) -> Double {
    guard perMinute > 0 else { return 0 }
    while t >= onset + length { onset += length + gap() }
    guard t >= onset else { return 0 }
    let phase = (t - onset) / length
    return 0.5 - 0.5 * cos(2 * .pi * phase)
  }

  private mutating func gap() -> Double {
    count += 1
    let u = max(SplitMix64.unit(seed: seed, index: count), 1e-9)
    return -log(u) * 60 / perMinute
  }
}
