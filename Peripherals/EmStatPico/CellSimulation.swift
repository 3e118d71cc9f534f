#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The cell's state in time: the charge on its capacitor and the diffusion
/// layer of its redox couple. The applied potential (or current) is held
/// constant over each step (the Pico applies staircases), and the response is
/// sampled at the step's end.
///
/// The cell is its rest (open-circuit) potential in series with its circuit:
/// a potential E drives the circuit with E − E_rest. The redox couple's
/// current is the exact superposition of Cottrell responses to each change of
/// the surface's oxidised fraction (reversible couple, semi-infinite planar
/// diffusion, equal diffusion coefficients):
/// i(t) = nFA√D·C* / √π · Σₖ Δθₖ / √(t − tₖ).
struct CellSimulation: Sendable {
  var cell: ElectrochemicalCell
  /// The voltage across the capacitor (series RC) or the parallel branch (Randles).
  private(set) var interfaceVoltage = 0.0
  /// Seconds since the simulation started.
  private(set) var time = 0.0
  /// Changes of the surface's oxidised fraction since the diffusion layer was
  /// last reset: when, and by how much.
  private var redoxSteps: [(time: Double, change: Double)] = []
  /// The surface's oxidised fraction now (0: only the reduced form, as in the bulk).
  private var surfaceFraction = 0.0
  /// The most potential changes kept (older ones are merged away: the layer is reset).
  private static let historyLimit = 200_000

  init(cell: ElectrochemicalCell) { self.cell = cell }

  /// Starts a fresh diffusion layer (bulk composition at the surface), as at
  /// the start of each measurement loop.
  mutating func resetDiffusion() {
    redoxSteps = []
    surfaceFraction = 0
  }

  /// Holds `potential` for `duration` seconds (`cellOn` false: no current
  /// flows and the interface relaxes) and returns the current at the end, in A.
  mutating func step(potential: Double, duration: Double, cellOn: Bool) -> Double {
    let duration = max(0, duration)
    guard cellOn else {
      relax(duration)
      return 0
    }
    let drive = potential - cell.restPotential
    var current: Double
    switch cell.circuit {
    case .resistor(let r):
      current = drive / max(r, 1e-3)
    case .seriesRC(let r, let c):
      let rs = max(r, 1e-3)
      let tau = rs * c
      interfaceVoltage = drive + (interfaceVoltage - drive) * exp(-duration / max(tau, 1e-15))
      current = (drive - interfaceVoltage) / rs
    case .randles(let solution, let rct, let cdl):
      let rs = max(solution, 1e-3)
      let rp = max(rct, 1e-3)
      let target = drive * rp / (rs + rp)
      let tau = cdl * rs * rp / (rs + rp)
      interfaceVoltage = target + (interfaceVoltage - target) * exp(-duration / max(tau, 1e-15))
      current = (drive - interfaceVoltage) / rs
    case .open:
      current = 0
    }
    if let redox = cell.redox {
      let fraction = redox.oxidisedFraction(at: potential)
      if fraction != surfaceFraction {
        if redoxSteps.count >= Self.historyLimit { redoxSteps.removeFirst(redoxSteps.count / 2) }
        redoxSteps.append((time, fraction - surfaceFraction))
        surfaceFraction = fraction
      }
      time += duration
      current += faradaicCurrent(redox)
    } else {
      time += duration
    }
    return current
  }

  /// Forces `current` (A) through the cell for `duration` seconds (galvanostatic
  /// control) and returns the potential of the working electrode at the end,
  /// in V, within the compliance `limit`. The redox couple does not take part.
  mutating func step(current: Double, duration: Double, cellOn: Bool, limit: Double) -> Double {
    let duration = max(0, duration)
    guard cellOn else {
      relax(duration)
      return openCircuitPotential
    }
    time += duration
    var potential: Double
    switch cell.circuit {
    case .resistor(let r):
      potential = current * r
    case .seriesRC(let r, let c):
      interfaceVoltage += current * duration / max(c, 1e-15)
      potential = current * r + interfaceVoltage
    case .randles(let rs, let rct, let cdl):
      let target = current * rct
      interfaceVoltage = target + (interfaceVoltage - target) * exp(-duration / max(rct * cdl, 1e-15))
      potential = current * rs + interfaceVoltage
    case .open:
      potential = current == 0 ? 0 : (current > 0 ? limit : -limit)
    }
    potential += cell.restPotential
    if abs(potential - cell.restPotential) > limit {
      // Compliance: the Pico cannot drive more; the interface follows.
      potential = cell.restPotential + (potential > cell.restPotential ? limit : -limit)
    }
    return potential
  }

  /// The potential the cell shows with no current: its rest potential plus
  /// the charge left on its capacitance.
  var openCircuitPotential: Double {
    switch cell.circuit {
    case .seriesRC, .randles: cell.restPotential + interfaceVoltage
    case .resistor, .open: cell.restPotential
    }
  }

  /// Open circuit for `duration`: a Randles interface discharges through Rct;
  /// a series capacitor keeps its charge.
  private mutating func relax(_ duration: Double) {
    time += duration
    if case .randles(_, let rct, let cdl) = cell.circuit {
      interfaceVoltage *= exp(-duration / max(rct * cdl, 1e-12))
    }
  }

  private func faradaicCurrent(_ redox: RedoxCouple) -> Double {
    var sum = 0.0
    for step in redoxSteps {
      let elapsed = time - step.time
      if elapsed > 0 { sum += step.change / elapsed.squareRoot() }
    }
    return redox.scale * sum / Double.pi.squareRoot()
  }
}
