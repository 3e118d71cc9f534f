/// The unit prefix character that ends a value in a MethodSCRIPT data package:
/// the value is the decoded integer times the prefix's factor. `i` marks an
/// integer (factor 1).
public enum SIPrefix: Character, CaseIterable, Hashable, Sendable, CustomStringConvertible {
  case atto = "a"
  case femto = "f"
  case pico = "p"
  case nano = "n"
  case micro = "u"
  case milli = "m"
  case none = " "
  case kilo = "k"
  case mega = "M"
  case giga = "G"
  case tera = "T"
  case peta = "P"
  case exa = "E"
  case integer = "i"

  /// The power of ten the prefix stands for (0 for `none` and `integer`).
  public var exponent: Int {
    switch self {
    case .atto: -18
    case .femto: -15
    case .pico: -12
    case .nano: -9
    case .micro: -6
    case .milli: -3
    case .none, .integer: 0
    case .kilo: 3
    case .mega: 6
    case .giga: 9
    case .tera: 12
    case .peta: 15
    case .exa: 18
    }
  }

  /// The factor, e.g. `1e-6` for micro (written as a literal, so it is the
  /// closest `Double` to the power of ten).
  public var factor: Double {
    switch self {
    case .atto: 1e-18
    case .femto: 1e-15
    case .pico: 1e-12
    case .nano: 1e-9
    case .micro: 1e-6
    case .milli: 1e-3
    case .none, .integer: 1
    case .kilo: 1e3
    case .mega: 1e6
    case .giga: 1e9
    case .tera: 1e12
    case .peta: 1e15
    case .exa: 1e18
    }
  }

  /// The prefixes for real values, smallest first (every case but `integer`).
  public static let scaled: [SIPrefix] = [
    .atto, .femto, .pico, .nano, .micro, .milli, .none, .kilo, .mega, .giga, .tera, .peta, .exa,
  ]

  public var description: String { String(rawValue) }
}
