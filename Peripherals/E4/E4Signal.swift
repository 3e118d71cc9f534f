/// The wristband's sampled streams a scenario can drive, by the names
/// scenarios use.
public enum E4Signal: String, CaseIterable, Hashable, Sendable {
  /// Blood volume pulse, 64 Hz, in BVP units.
  case bvp
  /// Electrodermal activity (skin conductance), 4 Hz, in µS.
  case eda
  /// Skin temperature, 4 Hz, in °C.
  case temperature
  /// Acceleration along x (towards the USB slot), 32 Hz, in g.
  case accelerationX = "acc.x"
  /// Acceleration along y (towards the shorter strap), 32 Hz, in g.
  case accelerationY = "acc.y"
  /// Acceleration along z (towards the bottom of the case), 32 Hz, in g.
  case accelerationZ = "acc.z"

  /// Samples per second.
  public var sampleRate: Int {
    switch self {
    case .bvp: 64
    case .eda, .temperature: 4
    case .accelerationX, .accelerationY, .accelerationZ: 32
    }
  }

  /// The signal's place in `allCases`: the model keeps its sources in an
  /// array, read for every sample without hashing.
  var index: Int {
    switch self {
    case .bvp: 0
    case .eda: 1
    case .temperature: 2
    case .accelerationX: 3
    case .accelerationY: 4
    case .accelerationZ: 5
    }
  }
}
