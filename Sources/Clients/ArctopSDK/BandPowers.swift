import Foundation

/// EEG band powers over one analysis window (a second at 256 Hz), averaged
/// over the sensors, in µV²: what the prediction service works from.
public struct BandPowers: Hashable, Sendable, Codable {
  public var delta: Double
  public var theta: Double
  public var alpha: Double
  public var beta: Double
  public var gamma: Double
  /// ln(alpha on AF8) − ln(alpha on AF7): frontal alpha asymmetry.
  public var frontalAsymmetry: Double
  /// Whether a blink (a slow swing of more than 80 µV on AF7 and AF8) is in the window.
  public var blink: Bool

  /// Band edges in Hz: delta 1–3, theta 4–7, alpha 8–12, beta 13–30, gamma 31–44.
  static let bands: [ClosedRange<Int>] = [1...3, 4...7, 8...12, 13...30, 31...44]

  public init(
    delta: Double, theta: Double, alpha: Double, beta: Double, gamma: Double, frontalAsymmetry: Double = 0,
    blink: Bool = false
  ) {
    self.delta = delta
    self.theta = theta
    self.alpha = alpha
    self.beta = beta
    self.gamma = gamma
    self.frontalAsymmetry = frontalAsymmetry
    self.blink = blink
  }

  /// The sum of every band.
  public var total: Double { delta + theta + alpha + beta + gamma }
  /// Alpha's share of the total, 0…1.
  public var relativeAlpha: Double { total > 0 ? alpha / total : 0 }

  /// The band powers of `windows`, one per sensor (TP9, AF7, AF8, TP10), each
  /// 256 samples in µV: a Hann-windowed DFT at whole hertz.
  public static func of(_ windows: [[Double]]) -> BandPowers {
    let spectra = spectraInPairs(windows)
    func band(_ range: ClosedRange<Int>, _ spectrum: [Double]) -> Double { range.reduce(0) { $0 + spectrum[$1] } }
    let perBand = bands.map { range in spectra.reduce(0) { $0 + band(range, $1) } / Double(max(1, spectra.count)) }
    var asymmetry = 0.0
    var blink = false
    if windows.count == 4 {
      let (af7, af8) = (band(bands[2], spectra[1]), band(bands[2], spectra[2]))
      if af7 > 0, af8 > 0 { asymmetry = log(af8) - log(af7) }
      blink = [windows[1], windows[2]].allSatisfy { swing(lowPassed($0)) > 80 }
    }
    return BandPowers(
      delta: perBand[0], theta: perBand[1], alpha: perBand[2], beta: perBand[3], gamma: perBand[4],
      frontalAsymmetry: asymmetry, blink: blink)
  }

  private static let hann = (0..<256).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / 256) }
  /// cos and sin of 2π·k/256, the transform's twiddle factors.
  private static let cosines = (0..<128).map { cos(2 * Double.pi * Double($0) / 256) }
  private static let sines = (0..<128).map { sin(2 * Double.pi * Double($0) / 256) }
  /// Where each sample goes before the transform's first stage: its index with the 8 bits reversed.
  private static let bitReversed = (0..<256).map { n in (0..<8).reduce(0) { $0 << 1 | (n >> $1 & 1) } }

  /// The spectra of `windows`, two at a time (`spectra(_:_:)`).
  private static func spectraInPairs(_ windows: [[Double]]) -> [[Double]] {
    var all: [[Double]] = []
    all.reserveCapacity(windows.count)
    var next = 0
    while next < windows.count {
      let pair = spectra(windows[next], next + 1 < windows.count ? windows[next + 1] : nil)
      all.append(pair.0)
      if let second = pair.1 { all.append(second) }
      next += 2
    }
    return all
  }

  /// Power at 0…44 Hz of two windows of 256 samples each (µV², scaled so a
  /// sine of amplitude A gives about A²/2 in its bin): Hann-windowed, their
  /// mean removed, one radix-2 FFT of the first as the real part and the
  /// second as the imaginary part, a second of EEG per channel. Each one's
  /// bin k is then (Z[k] + conj Z[256−k]) / 2 and (Z[k] − conj Z[256−k]) / 2i,
  /// so the last stage works out only bins 0…44 and 212…255; the others'
  /// butterflies would not change them. A window that is not 256 samples
  /// long has no power.
  private static func spectra(_ first: [Double], _ second: [Double]?) -> ([Double], [Double]?) {
    // Bins 0…44 (0…44 Hz) are kept. Pair k of the last stage gives bins k
    // and k + 128: pairs 0…44 give the bins kept, and from pair 84 on, their
    // mirrors 256 − 44 … 255.
    let keptBins = 45
    let firstMirrorPair = 128 - (keptBins - 1)
    let zero = [Double](repeating: 0, count: keptBins)
    let firstFits = first.count == 256
    let secondFits = second?.count == 256
    guard firstFits || secondFits else { return (zero, second.map { _ in zero }) }
    let (hann, cosines, sines, bitReversed) = (Self.hann, Self.cosines, Self.sines, Self.bitReversed)
    return withUnsafeTemporaryAllocation(of: Double.self, capacity: 512) { buffer in
      let (re, im) = (buffer.baseAddress!, buffer.baseAddress! + 256)
      /// One window, its mean removed and Hann-windowed, into `part` in bit-reversed order.
      func load(_ samples: [Double]?, fits: Bool, into part: UnsafeMutablePointer<Double>) {
        guard fits, let samples else {
          part.initialize(repeating: 0, count: 256)
          return
        }
        let mean = samples.reduce(0, +) / 256
        var n = 0
        while n < 256 {
          (part + bitReversed[n]).initialize(to: (samples[n] - mean) * hann[n])
          n += 1
        }
      }
      load(first, fits: firstFits, into: re)
      load(second, fits: secondFits, into: im)
      var half = 1
      while half < 256 {
        // Butterflies of blocks of 2·half; twiddle k·(128/half) for the k-th pair.
        let step = 128 / half
        var block = 0
        while block < 256 {
          var k = 0
          while k < half {
            // The last stage: only the pairs that give bins 0…44 and 212…255.
            if half == 128, k == keptBins { k = firstMirrorPair }
            let (c, s) = (cosines[k * step], -sines[k * step])
            let (top, bottom) = (block + k, block + k + half)
            let (r, i) = (re[bottom] * c - im[bottom] * s, re[bottom] * s + im[bottom] * c)
            (re[bottom], im[bottom]) = (re[top] - r, im[top] - i)
            (re[top], im[top]) = (re[top] + r, im[top] + i)
            k += 1
          }
          block += 2 * half
        }
        half *= 2
      }
      // The Hann window halves the amplitude: |X| = A · N / 4, so a bin's
      // power A² / 2 is 8 |X|² / N²; and |X|² is a quarter of the sum's
      // (or difference's) squared magnitude.
      var one = [Double](repeating: 0, count: keptBins)
      var other = [Double](repeating: 0, count: keptBins)
      for f in 0..<keptBins {
        let mirror = (256 - f) & 255
        let (zr, zi, wr, wi) = (re[f], im[f], re[mirror], im[mirror])
        one[f] = 8 * ((zr + wr) * (zr + wr) + (zi - wi) * (zi - wi)) / 4 / 65536
        other[f] = 8 * ((zi + wi) * (zi + wi) + (zr - wr) * (zr - wr)) / 4 / 65536
      }
      return (firstFits ? one : zero, second.map { _ in secondFits ? other : zero })
    }
  }

  /// A moving average over 16 samples (62 ms): what a blink leaves.
  private static func lowPassed(_ samples: [Double]) -> [Double] {
    guard samples.count >= 16 else { return samples }
    var sum = samples[0..<16].reduce(0, +)
    var out = [sum / 16]
    for n in 16..<samples.count {
      sum += samples[n] - samples[n - 16]
      out.append(sum / 16)
    }
    return out
  }

  private static func swing(_ samples: [Double]) -> Double {
    (samples.max() ?? 0) - (samples.min() ?? 0)
  }
}
