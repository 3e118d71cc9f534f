/// The arithmetic behind MethodSCRIPT's commands on arrays of measured
/// values: `smooth`, `linear_fit` and `peak_detect`.
///
/// PalmSens' manual, which gives the exact algorithms, was not retrieved;
/// these are the textbook methods the command names promise (the examples
/// call `smooth` Savitzky–Golay), with the choices documented in the device
/// README.
enum ArrayAnalysis {
  /// The Savitzky–Golay window (points) for each `smooth` strength: 0 leaves
  /// the data as it is, 1 to 4 smooth more and more (Doppel's choice).
  static let smoothingWindows = [1, 5, 9, 15, 25]

  /// The window for a strength, or `nil` for one there is no window for.
  static func smoothingWindow(strength: Double) -> Int? {
    guard strength >= 0, strength < Double(smoothingWindows.count), strength == strength.rounded() else { return nil }
    return smoothingWindows[Int(strength)]
  }

  /// Quadratic Savitzky–Golay smoothing with a centred window of `window`
  /// points; near the ends the window shrinks to stay centred (its last
  /// point is left as it is).
  static func smooth(_ values: [Double], window: Int) -> [Double] {
    let half = window / 2
    return values.indices.map { i in
      let m = min(half, i, values.count - 1 - i)
      guard m >= 2 else { return values[i] }  // a quadratic through 3 points is the points
      // Weights of the quadratic least-squares fit's value at the centre.
      let m2 = Double(m * m)
      let norm = Double((2 * m - 1) * (2 * m + 1) * (2 * m + 3))
      var sum = 0.0
      for k in -m...m {
        sum += (3 * (3 * m2 + 3 * Double(m) - 1) - 15 * Double(k * k)) / norm * values[i + k]
      }
      return sum
    }
  }

  /// The least-squares line y = slope·x + intercept, or `nil` when the
  /// points do not define one (fewer than two, or every x the same).
  static func linearFit(x: [Double], y: [Double]) -> (slope: Double, intercept: Double)? {
    let n = min(x.count, y.count)
    guard n >= 2 else { return nil }
    let meanX = x.prefix(n).reduce(0, +) / Double(n)
    let meanY = y.prefix(n).reduce(0, +) / Double(n)
    var sxx = 0.0
    var sxy = 0.0
    for i in 0..<n {
      sxx += (x[i] - meanX) * (x[i] - meanX)
      sxy += (x[i] - meanX) * (y[i] - meanY)
    }
    guard sxx > 0 else { return nil }
    let slope = sxy / sxx
    return (slope, meanY - slope * meanX)
  }

  /// A peak: its index and its height above its base.
  struct Peak: Equatable {
    var index: Int
    var height: Double
  }

  /// The maxima (or, with `maxima` false, the minima) of `values` whose
  /// prominence — the height above the higher of the lowest points on
  /// either side before a higher point — is at least `minimumHeight`,
  /// highest first. The first and last points are not peaks.
  static func peaks(_ values: [Double], minimumHeight: Double, maxima: Bool = true) -> [Peak] {
    let v = maxima ? values : values.map { -$0 }
    guard v.count >= 3 else { return [] }
    var found: [Peak] = []
    for i in 1..<(v.count - 1) where v[i] > v[i - 1] && v[i] >= v[i + 1] {
      var leftBase = v[i]
      var j = i - 1
      while j >= 0, v[j] <= v[i] {
        leftBase = min(leftBase, v[j])
        j -= 1
      }
      var rightBase = v[i]
      j = i + 1
      while j < v.count, v[j] <= v[i] {
        rightBase = min(rightBase, v[j])
        j += 1
      }
      let height = v[i] - max(leftBase, rightBase)
      if height >= minimumHeight, height > 0 { found.append(Peak(index: i, height: height)) }
    }
    return found.sorted { $0.height > $1.height || ($0.height == $1.height && $0.index < $1.index) }
  }
}
