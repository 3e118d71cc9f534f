/// The little complex arithmetic impedances need.
struct Complex {
  var real: Double
  var imaginary: Double

  init(_ real: Double, _ imaginary: Double) {
    self.real = real
    self.imaginary = imaginary
  }

  static func + (lhs: Complex, rhs: Complex) -> Complex {
    Complex(lhs.real + rhs.real, lhs.imaginary + rhs.imaginary)
  }

  var reciprocal: Complex {
    let norm = real * real + imaginary * imaginary
    guard norm > 0 else { return Complex(.infinity, 0) }
    return Complex(real / norm, -imaginary / norm)
  }
}
