#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The cell's state in time: the charge on its capacitor and the diffusion
/// layer of its redox couple. Potentials are held constant over each step
/// (the Pico applies a staircase), and the current is sampled at the step's end.
struct CellSimulation: Sendable {
  var cell: ElectrochemicalCell
  /// The voltage across the capacitor (series RC) or the parallel branch (Randles).
  private var interfaceVoltage = 0.0
  /// Surface fractions of the oxidised form at each step since the diffusion
  /// layer was last reset (uniform steps of `redoxStep` seconds).
  private var redoxHistory: [Double] = []
  private var redoxWeights: [Double] = [1]
  private var redoxStep = 0.0
  /// The longest history kept (older steps are dropped).
  private static let historyLimit = 20_000

  init(cell: ElectrochemicalCell) { self.cell = cell }

  /// Starts a fresh diffusion layer (bulk composition at the surface), as at
  /// the start of each measurement loop; later `step`s must last `duration`.
  mutating func resetDiffusion(step duration: Double) {
    redoxHistory = []
    redoxStep = duration
  }

  /// Holds `potential` for `duration` seconds (`cellOn` false: no current flows)
  /// and returns the current at the end, in A. `faradaic` includes the redox
  /// couple's current (steps must then be of the duration given to `resetDiffusion`).
  mutating func step(potential: Double, duration: Double, cellOn: Bool, faradaic: Bool = false) -> Double {
    guard cellOn else {
      if case .randles(_, let rct, let cdl) = cell.circuit {
        interfaceVoltage *= exp(-duration / max(rct * cdl, 1e-12))
      }
      return 0
    }
    var current: Double
    switch cell.circuit {
    case .resistor(let r):
      current = potential / max(r, 1e-3)
    case .seriesRC(let r, let c):
      let rs = max(r, 1e-3)
      let tau = rs * c
      interfaceVoltage = potential + (interfaceVoltage - potential) * exp(-duration / max(tau, 1e-15))
      current = (potential - interfaceVoltage) / rs
    case .randles(let solution, let rct, let cdl):
      let rs = max(solution, 1e-3)
      let rp = max(rct, 1e-3)
      let target = potential * rp / (rs + rp)
      let tau = cdl * rs * rp / (rs + rp)
      interfaceVoltage = target + (interfaceVoltage - target) * exp(-duration / max(tau, 1e-15))
      current = (potential - interfaceVoltage) / rs
    case .open:
      current = 0
    }
    if faradaic, let redox = cell.redox, redoxStep > 0 {
      current += faradaicCurrent(redox, potential: potential)
    }
    return current
  }

  /// i(t) = nFA√D · d^½/dt^½ [C_O(0,t)], the semi-derivative taken with
  /// Grünwald–Letnikov weights over the uniform steps so far.
  private mutating func faradaicCurrent(_ redox: RedoxCouple, potential: Double) -> Double {
    redoxHistory.append(redox.oxidisedFraction(at: potential))
    if redoxHistory.count > Self.historyLimit { redoxHistory.removeFirst(redoxHistory.count - Self.historyLimit) }
    let count = redoxHistory.count
    while redoxWeights.count < count {
      let j = Double(redoxWeights.count)
      redoxWeights.append(redoxWeights[redoxWeights.count - 1] * (j - 1.5) / j)
    }
    var sum = 0.0
    for j in 0..<count { sum += redoxWeights[j] * redoxHistory[count - 1 - j] }
    return redox.scale * sum / redoxStep.squareRoot()
  }
}
