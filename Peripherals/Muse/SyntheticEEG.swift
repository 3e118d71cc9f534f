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
  /// Paul Kellet's pink-noise filter state.
  private var pink = [Double](repeating: 0, count: 7)
  private var alphaPhase = 0.0
  private var blinks: EventSchedule
  private var bursts: EventSchedule

  /// - Parameters:
  ///   - seed: this channel's background and rhythm.
  ///   - scheduleSeed: the headband's blinks and muscle bursts (the same for every channel).
  public init(channel: MuseChannel, parameters: Parameters = Parameters(), seed: UInt64, scheduleSeed: UInt64) {
    self.channel = channel
    self.parameters = parameters
    self.seed = seed
    self.scheduleSeed = scheduleSeed
    blinks = EventSchedule(perMinute: parameters.blinksPerMinute, length: 0.3, seed: scheduleSeed)
    bursts = EventSchedule(perMinute: parameters.musclePerMinute, length: 1.0, seed: scheduleSeed ^ 0x5EED)
  }

  /// The next sample, µV, under `conditions`.
  public mutating func next(_ conditions: Conditions) -> Double {
    let n = index
    index += 1
    let t = Double(n) / Self.sampleRate
    let white = SplitMix64.gaussian(seed: seed, index: n)
    let background = pinkNoise(white) * parameters.background
    let blink = blinks.shape(at: t)
    let burst = bursts.shape(at: t)
    guard conditions.onHead else {
      switch parameters.offHead {
      case .rail: return 1000
      case .flat: return 0
      }
    }
    if channel == .aux { return background * 0.2 + line(t) }
    let weight = channel.isTemporal ? 1.0 : 0.6
    let amplitude =
      weight * (parameters.alphaOpen + (parameters.alphaClosed - parameters.alphaOpen) * conditions.eyesClosed)
    // The alpha frequency wanders slowly within ±0.3 Hz.
    let frequency = parameters.alphaFrequency + 0.3 * sin(2 * .pi * 0.05 * t + Double(seed % 7))
    alphaPhase += 2 * .pi * frequency / Self.sampleRate
    if alphaPhase > 2 * .pi { alphaPhase -= 2 * .pi }
    let waxing = 1 + 0.3 * sin(2 * .pi * 0.2 * t + Double(seed % 5))
    var value = background + amplitude * waxing * sin(alphaPhase) + line(t)
    if channel.isFrontal, conditions.eyesClosed < 0.5 {
      value += (channel == .af7 ? 1 : 0.9) * parameters.blinkAmplitude * blink
    }
    let muscleWeight = channel.isTemporal ? 1.0 : 0.3
    if burst > 0 || conditions.muscle {
      value += muscleWeight * parameters.muscleAmplitude * SplitMix64.gaussian(seed: seed ^ 0xA5A5, index: n)
    }
    return value
  }

  private func line(_ t: Double) -> Double {
    parameters.lineNoise == 0 ? 0 : parameters.lineNoise * sin(2 * .pi * parameters.lineFrequency * t)
  }

  /// Unit-variance 1/f noise from white noise (Paul Kellet's filter, normalised).
  private mutating func pinkNoise(_ white: Double) -> Double {
    pink[0] = 0.99886 * pink[0] + white * 0.0555179
    pink[1] = 0.99332 * pink[1] + white * 0.0750759
    pink[2] = 0.96900 * pink[2] + white * 0.1538520
    pink[3] = 0.86650 * pink[3] + white * 0.3104856
    pink[4] = 0.55000 * pink[4] + white * 0.5329522
    pink[5] = -0.7616 * pink[5] - white * 0.0168980
    let value = pink[0] + pink[1] + pink[2] + pink[3] + pink[4] + pink[5] + pink[6] + white * 0.5362
    pink[6] = white * 0.115926
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
