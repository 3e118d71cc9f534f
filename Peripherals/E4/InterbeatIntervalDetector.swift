/// The wristband's on-device beat detection: finds systolic peaks in the BVP
/// samples it sends and reports the interval between consecutive peaks,
/// after a warm-up and only when the wrist was still.
///
/// A sample is a peak when it is the largest within ±`halfWindow` samples
/// (0.31 s, so up to about 190 bpm) and stands in the upper 40 % of the
/// range of the last two seconds. An interval is reported when it lies in
/// 0.3…2 s, its beat comes after the warm-up, and the spread of the
/// acceleration magnitude from a quarter second before the previous beat to
/// a quarter second after this one stays under the motion threshold.
struct InterbeatIntervalDetector {
  /// A reported interval: the beat's BVP sample index and the interval in BVP samples.
  struct Interval: Hashable {
    var beatIndex: Int
    var samples: Int
  }

  static let halfWindow = 20
  static let rangeWindow = 128
  static let shortest = 19  // 0.3 s at 64 Hz
  static let longest = 128  // 2 s
  /// Below this range (BVP units) the signal is flat: no beats.
  static let minimumRange = 1.0

  /// Beats before this BVP sample index are not reported.
  let warmUpSamples: Int
  /// Acceleration-magnitude spread, in 1/64 g, above which an interval is motion-affected.
  let motionThreshold: Double

  /// Recent BVP samples; `bvp[0]` is sample `bvpBase`.
  private var bvp: [Double] = []
  private var bvpBase = 0
  /// Recent acceleration magnitudes (1/64 g, 32 Hz); `magnitudes[0]` is sample `accelerationBase`.
  private var magnitudes: [Double] = []
  private var accelerationBase = 0
  private var lastPeak: Int?

  init(warmUp: Double, motionThreshold: Double) {
    warmUpSamples = Int((warmUp * 64).rounded(.up))
    self.motionThreshold = motionThreshold * 64
  }

  /// Adds the next acceleration sample (as sent, 1/64 g).
  mutating func addAcceleration(x: Int8, y: Int8, z: Int8) {
    let (fx, fy, fz) = (Double(x), Double(y), Double(z))
    magnitudes.append((fx * fx + fy * fy + fz * fz).squareRoot())
    if magnitudes.count > 512 {
      magnitudes.removeFirst(256)
      accelerationBase += 256
    }
  }

  /// Adds the next BVP sample (as sent); returns the interval it completes, if any.
  mutating func addBVP(_ value: Double) -> Interval? {
    bvp.append(value)
    defer {
      if bvp.count > 512 {
        bvp.removeFirst(256)
        bvpBase += 256
      }
    }
    let newest = bvpBase + bvp.count - 1
    let candidate = newest - Self.halfWindow
    guard candidate - Self.halfWindow >= bvpBase, isPeak(candidate) else { return nil }
    defer { lastPeak = candidate }
    guard let previous = lastPeak else { return nil }
    let interval = candidate - previous
    guard candidate >= warmUpSamples, (Self.shortest...Self.longest).contains(interval),
      !moved(from: previous, to: candidate)
    else { return nil }
    return Interval(beatIndex: candidate, samples: interval)
  }

  private func value(_ index: Int) -> Double { bvp[index - bvpBase] }

  private func isPeak(_ index: Int) -> Bool {
    let centre = value(index)
    for j in (index - Self.halfWindow)..<index where value(j) >= centre { return false }
    for j in (index + 1)...(index + Self.halfWindow) where value(j) > centre { return false }
    let from = max(bvpBase, index - Self.rangeWindow)
    var low = centre
    var high = centre
    for j in from...(index + Self.halfWindow) {
      low = min(low, value(j))
      high = max(high, value(j))
    }
    return high - low >= Self.minimumRange && centre - low >= 0.6 * (high - low)
  }

  /// Whether the wrist moved around the interval between two beats (BVP sample indices).
  private func moved(from previous: Int, to beat: Int) -> Bool {
    let first = max(accelerationBase, previous / 2 - 8)
    let last = min(accelerationBase + magnitudes.count - 1, beat / 2 + 8)
    guard first <= last else { return false }
    let window = magnitudes[(first - accelerationBase)...(last - accelerationBase)]
    return window.max()! - window.min()! > motionThreshold
  }
}
