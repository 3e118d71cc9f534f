#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The simulated cell on the Pico's electrodes: an equivalent circuit, and
/// optionally a reversible redox couple whose faradaic current adds to it.
public struct ElectrochemicalCell: Hashable, Sendable {
  /// The equivalent circuit between the working and the counter/reference electrodes.
  public enum Circuit: Hashable, Sendable {
    /// A resistor (Ω), like PalmSens' 10 kΩ dummy cell.
    case resistor(Double)
    /// A resistor (Ω) in series with a capacitor (F).
    case seriesRC(resistance: Double, capacitance: Double)
    /// Randles: solution resistance in series with the charge-transfer
    /// resistance parallel to the double-layer capacitance.
    case randles(solutionResistance: Double, chargeTransferResistance: Double, doubleLayerCapacitance: Double)
    /// No conduction (only a redox couple, if any, passes current).
    case open
  }

  /// The circuit.
  public var circuit: Circuit
  /// A reversible couple whose diffusion-limited current adds to the circuit's
  /// under potential control, and whose Warburg impedance adds to the
  /// circuit's in EIS and ACV.
  public var redox: RedoxCouple?
  /// The open-circuit (rest) potential in V, in series with the circuit: the
  /// potential OCP settles at, and where no circuit current flows.
  public var restPotential: Double

  public init(circuit: Circuit, redox: RedoxCouple? = nil, restPotential: Double = 0) {
    self.circuit = circuit
    self.redox = redox
    self.restPotential = restPotential
  }

  /// PalmSens' dummy cell: a 10 kΩ resistor.
  public static let dummy = ElectrochemicalCell(circuit: .resistor(10_000))

  public static func resistor(_ ohms: Double) -> ElectrochemicalCell {
    ElectrochemicalCell(circuit: .resistor(ohms))
  }

  public static func seriesRC(resistance: Double, capacitance: Double) -> ElectrochemicalCell {
    ElectrochemicalCell(circuit: .seriesRC(resistance: resistance, capacitance: capacitance))
  }

  public static func randles(
    solutionResistance: Double, chargeTransferResistance: Double, doubleLayerCapacitance: Double,
    redox: RedoxCouple? = nil, restPotential: Double = 0
  ) -> ElectrochemicalCell {
    ElectrochemicalCell(
      circuit: .randles(
        solutionResistance: solutionResistance, chargeTransferResistance: chargeTransferResistance,
        doubleLayerCapacitance: doubleLayerCapacitance), redox: redox, restPotential: restPotential)
  }

  /// The complex impedance at `frequency` (Hz) around the DC `potential`:
  /// real and imaginary parts in Ω (the imaginary part is negative for a
  /// capacitive cell). With a redox couple, its Warburg impedance
  /// Z_W = σ(1 − j)/√ω is in series with Rct (Randles) or parallel to the
  /// circuit (the others).
  public func impedance(at frequency: Double, potential: Double = 0) -> (real: Double, imaginary: Double) {
    let omega = 2 * Double.pi * frequency
    guard let redox, let sigma = redox.warburgCoefficient(at: potential) else { return circuitImpedance(omega) }
    let warburg = Complex(sigma / omega.squareRoot(), -sigma / omega.squareRoot())
    let total: Complex
    switch circuit {
    case .randles(let rs, let rct, let cdl):
      let faradaic = Complex(rct, 0) + warburg
      total = Complex(rs, 0) + (Complex(0, omega * cdl) + faradaic.reciprocal).reciprocal
    case .open:
      total = warburg
    default:
      let circuit = circuitImpedance(omega)
      total = (Complex(circuit.real, circuit.imaginary).reciprocal + warburg.reciprocal).reciprocal
    }
    return (total.real, total.imaginary)
  }

  private func circuitImpedance(_ omega: Double) -> (real: Double, imaginary: Double) {
    switch circuit {
    case .resistor(let r):
      return (r, 0)
    case .seriesRC(let r, let c):
      return (r, -1 / (omega * c))
    case .randles(let rs, let rct, let cdl):
      // Rct / (1 + jωRctC) = Rct (1 − jωRctC) / (1 + (ωRctC)²)
      let x = omega * rct * cdl
      let denominator = 1 + x * x
      return (rs + rct / denominator, -rct * x / denominator)
    case .open:
      return (1e12, 0)
    }
  }
}

/// A reversible (Nernstian) one-step couple O + n e⁻ ⇌ R under semi-infinite
/// linear diffusion, with only the reduced form in the bulk solution (so a
/// positive-going sweep oxidises it), equal diffusion coefficients.
public struct RedoxCouple: Hashable, Sendable {
  /// E⁰′ in V.
  public var formalPotential: Double
  /// Electrons transferred, n.
  public var electrons: Int
  /// Bulk concentration of the reduced form, mmol/L.
  public var concentration: Double
  /// Diffusion coefficient, cm²/s.
  public var diffusionCoefficient: Double
  /// Electrode area, cm².
  public var electrodeArea: Double
  /// Temperature, K.
  public var temperature: Double

  /// Defaults: 1 mM ferrocyanide-like couple (D = 7.6·10⁻⁶ cm²/s) at E⁰′ = 0.2 V
  /// on a 3 mm disc (0.0707 cm²), 25 °C.
  public init(
    formalPotential: Double = 0.2, electrons: Int = 1, concentration: Double = 1, diffusionCoefficient: Double = 7.6e-6,
    electrodeArea: Double = 0.0707, temperature: Double = 298.15
  ) {
    self.formalPotential = formalPotential
    self.electrons = max(1, electrons)
    self.concentration = concentration
    self.diffusionCoefficient = diffusionCoefficient
    self.electrodeArea = electrodeArea
    self.temperature = temperature
  }

  static let faraday = 96_485.332_12
  static let gasConstant = 8.314_462_618

  /// nF/RT in 1/V.
  var f: Double { Double(electrons) * Self.faraday / (Self.gasConstant * temperature) }

  /// nFA√D·C* in A·s^½ (concentration in mol/cm³).
  var scale: Double {
    Double(electrons) * Self.faraday * electrodeArea * diffusionCoefficient.squareRoot() * concentration * 1e-6
  }

  /// σ in Ω·s^-½ at potential `e` (from the surface concentrations that
  /// potential holds); `nil` where one form is absent at the surface.
  public func warburgCoefficient(at e: Double) -> Double? {
    let theta = oxidisedFraction(at: e)
    let product = theta * (1 - theta) * concentration * 1e-6
    guard product > 0 else { return nil }
    let n = Double(electrons)
    return Self.gasConstant * temperature
      / (n * n * Self.faraday * Self.faraday * electrodeArea * (2 * diffusionCoefficient).squareRoot() * product)
  }

  /// The peak of a reversible DPV (A) with pulse `amplitude` (V) of `pulseTime` (s):
  /// nFA√D·C*/√(π t_p) · tanh(nFΔE/4RT), at E⁰′ − ΔE/2 (the base potential).
  public func differentialPulsePeak(amplitude: Double, pulseTime: Double) -> Double {
    scale / (Double.pi * pulseTime).squareRoot() * tanh(f * amplitude / 4)
  }

  /// The limiting current of a reversible NPV (A) with pulses of `pulseTime` (s): Cottrell at t_p.
  public func normalPulseLimit(pulseTime: Double) -> Double {
    scale / (Double.pi * pulseTime).squareRoot()
  }

  /// The peak AC current (A rms) of a reversible ACV at E⁰′ with `amplitude`
  /// (V rms) at `frequency` (Hz): n²F²AC*√(ωD)·ΔE / 4RT.
  public func alternatingCurrentPeak(amplitude: Double, frequency: Double) -> Double {
    let n = Double(electrons)
    return n * n * Self.faraday * Self.faraday * electrodeArea * concentration * 1e-6
      * (2 * Double.pi * frequency * diffusionCoefficient).squareRoot() * amplitude
      / (4 * Self.gasConstant * temperature)
  }

  /// The Randles–Ševčík peak current (A) of a reversible sweep at `scanRate` V/s.
  public func peakCurrent(scanRate: Double) -> Double {
    0.4463 * scale * (f * scanRate).squareRoot()
  }

  /// The fraction of the surface concentration in the oxidised form at potential `e`.
  func oxidisedFraction(at e: Double) -> Double {
    let x = f * (e - formalPotential)
    if x > 700 { return 1 }
    if x < -700 { return 0 }
    let theta = exp(x)
    return theta / (1 + theta)
  }
}
