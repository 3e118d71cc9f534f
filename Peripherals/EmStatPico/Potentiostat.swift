import MethodScriptFormat
import Signals

/// The Pico's current measurement: speed mode, current range, autoranging,
/// noise and the status flags of each reading.
struct Potentiostat: Sendable {
  /// High-speed ranges (`set_pgstat_mode 3`) or low-speed ones (mode 2).
  var highSpeed = true
  /// The range in use.
  var range = CurrentRange(index: 0x80 | 8)
  /// The ranges autoranging may choose from; `nil` when it is off.
  var autorange: ClosedRange<CurrentRange>?
  /// Noise standard deviation as a fraction of the range's full scale.
  var noiseFraction: Double
  /// Relative noise standard deviation of impedance readings.
  var impedanceNoise: Double
  /// Seed of the noise.
  var seed: UInt64
  /// Readings taken so far (keys the noise).
  var readings: UInt64 = 0

  /// The most potential (V, either sign, from the cell's rest potential) the
  /// galvanostat drives to hold its current (Doppel's assumption; PalmSens'
  /// datasheet figure was not retrieved).
  static let complianceVoltage = 2.2
  /// The full scale potential noise is a fraction of, V.
  static let potentialNoiseScale = 1.0

  /// Readings above this fraction of full scale get the overload-warning flag.
  static let warningFraction = 0.95
  /// Readings below this fraction of full scale, in the smallest range allowed, get the underload flag.
  static let underloadFraction = 0.001

  init(noiseFraction: Double, impedanceNoise: Double, seed: UInt64) {
    self.noiseFraction = max(0, noiseFraction)
    self.impedanceNoise = max(0, impedanceNoise)
    self.seed = seed
  }

  /// Switches speed mode, moving the range and autoranging limits to the
  /// same full scale in the other mode's ranges.
  mutating func setHighSpeed(_ highSpeed: Bool) {
    guard highSpeed != self.highSpeed else { return }
    self.highSpeed = highSpeed
    range = CurrentRange.smallest(covering: range.fullScale ?? 1e-3, highSpeed: highSpeed)
    if let limits = autorange {
      autorange =
        CurrentRange.smallest(
          covering: limits.lowerBound.fullScale ?? 0, highSpeed: highSpeed)...CurrentRange.smallest(
          covering: limits.upperBound.fullScale ?? 5e-3, highSpeed: highSpeed)
    }
  }

  /// `set_range ba I`: the smallest range covering I.
  mutating func setRange(covering current: Double) {
    range = CurrentRange.smallest(covering: current, highSpeed: highSpeed)
  }

  /// `set_autoranging ba min max`.
  mutating func setAutoranging(from low: Double, to high: Double) {
    let a = CurrentRange.smallest(covering: min(low, high), highSpeed: highSpeed)
    let b = CurrentRange.smallest(covering: max(low, high), highSpeed: highSpeed)
    autorange = a...b
    range = min(max(range, a), b)
  }

  /// With autoranging, the smallest allowed range that holds `current` below
  /// the overload warning (the Pico autoranges within a point's acquisition);
  /// otherwise the range set.
  private mutating func chooseRange(for current: Double) -> CurrentRange {
    guard let limits = autorange else { return range }
    let allowed = CurrentRange.ranges(highSpeed: highSpeed).filter { limits.contains($0) }
    range =
      allowed.first { ($0.fullScale ?? 0) * Self.warningFraction >= abs(current) } ?? allowed.last ?? range
    return range
  }

  private mutating func gaussian() -> Double {
    readings &+= 1
    return SplitMix64.gaussian(seed: seed, index: readings)
  }

  /// A current reading of `current` (A): the value reported, its status and range.
  mutating func measure(current: Double) -> (value: Double, status: MeasurementStatus, range: CurrentRange) {
    let range = chooseRange(for: current)
    let fullScale = range.fullScale ?? 1e-3
    var status = MeasurementStatus.ok
    var reading = current + noiseFraction * fullScale * gaussian()
    if abs(current) > fullScale {
      status.insert(.overload)
      reading = min(max(reading, -fullScale), fullScale)
    } else if abs(current) > Self.warningFraction * fullScale {
      status.insert(.overloadWarning)
    } else if abs(current) < Self.underloadFraction * fullScale,
      autorange == nil || range == autorange?.lowerBound
    {
      status.insert(.underload)
    }
    return (reading, status, range)
  }

  /// A potential reading of `potential` (V), with noise of `noiseFraction` × 1 V.
  mutating func measure(potential: Double) -> Double {
    potential + noiseFraction * Self.potentialNoiseScale * gaussian()
  }

  /// An impedance reading of `impedance` (Ω) measured with `amplitude` (V rms).
  mutating func measure(impedance: (real: Double, imaginary: Double), amplitude: Double) -> (
    real: Double, imaginary: Double, status: MeasurementStatus, range: CurrentRange
  ) {
    let magnitude = (impedance.real * impedance.real + impedance.imaginary * impedance.imaginary).squareRoot()
    let peakCurrent = amplitude * 2.0.squareRoot() / max(magnitude, 1e-12)
    let current = measure(current: peakCurrent)
    let fullScale = current.range.fullScale ?? 1e-3
    let relative = impedanceNoise + noiseFraction * fullScale / max(peakCurrent, 1e-18)
    let real = impedance.real + relative * magnitude * gaussian()
    let imaginary = impedance.imaginary + relative * magnitude * gaussian()
    return (real, imaginary, current.status, current.range)
  }
}
