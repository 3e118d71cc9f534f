import Foundation
import MethodScriptFormat
import Testing

@testable import EmStatPico

/// Each technique on the simulated cells against its analytic expectation
/// (noise off; the tolerance of each check says what it allows for).
@Suite struct EmStatPicoTechniqueTests {
  /// The reversible couple alone (no circuit current): 1 mM, E⁰′ 0.2 V, n = 1.
  static let couple = RedoxCouple()
  static let redoxCell = ElectrochemicalCell(circuit: .open, redox: couple)

  static func run(_ text: String, cell: ElectrochemicalCell) async throws -> [MethodScriptPackage] {
    let lines = try await EmStatPicoPhysicsTests.run(text, cell: cell)
    #expect(lines.last == "", "\(lines.suffix(3))")
    return try EmStatPicoPhysicsTests.packages(lines)
  }

  /// (x, y) of each package's first two values.
  static func curve(_ packages: [MethodScriptPackage]) -> [(x: Double, y: Double)] {
    packages.map { ($0.values[0].value, $0.values[1].value) }
  }

  /// The vertex of the parabola through the largest |y| and its neighbours.
  static func peak(_ curve: [(x: Double, y: Double)]) -> (x: Double, y: Double) {
    let k = curve.indices.max { abs(curve[$0].y) < abs(curve[$1].y) }!
    guard k > 0, k < curve.count - 1 else { return curve[k] }
    let (y0, y1, y2) = (curve[k - 1].y, curve[k].y, curve[k + 1].y)
    let h = curve[k + 1].x - curve[k].x
    let denominator = y0 - 2 * y1 + y2
    guard denominator != 0 else { return curve[k] }
    let offset = 0.5 * (y0 - y2) / denominator
    return (curve[k].x + offset * h, y1 - 0.25 * (y0 - y2) * offset)
  }

  static func loop(_ header: String, _ variables: [String]) -> String {
    """
    set_pgstat_chan 0
    set_pgstat_mode 3
    set_autoranging ba 100n 5m
    set_e 0
    cell_on
    \(header)
      pck_start
    \(variables.map { "  pck_add \($0)" }.joined(separator: "\n"))
      pck_end
    endloop
    on_finished:
      cell_off
    """
  }

  @Test func cvShowsTheRandlesSevcikPeakAndTheReversibleSeparation() async throws {
    // The Pico sweeps in steps and samples each at its end: such a staircase
    // approaches the linear sweep as √ΔE (1 mV steps: 6.5 % below
    // Randles–Ševčík, 4 mV late); 0.25 mV steps at 100 mV/s are within 4 %.
    let packages = try await Self.run(
      Self.loop("meas_loop_cv e i -100m 500m -100m 250u 100m", ["e", "i"]), cell: Self.redoxCell)
    let curve = Self.curve(packages)
    let turn = curve.indices.max { curve[$0].x < curve[$1].x }!
    let anodic = Self.peak(Array(curve[...turn]))
    let cathodic = Self.peak(Array(curve[turn...]).map { ($0.x, -$0.y) })
    let expected = Self.couple.peakCurrent(scanRate: 0.1)
    #expect(abs(anodic.y - expected) / expected < 0.04, "peak \(anodic.y) A, Randles–Ševčík \(expected) A")
    // Anodic peak 28.5 mV/n above E⁰′; separation ≈ 59 mV/n (57–60 mV for a sweep with this switching).
    #expect(abs(anodic.x - 0.2285) < 0.003, "anodic peak at \(anodic.x) V")
    let separation = anodic.x - cathodic.x
    #expect(separation > 0.056 && separation < 0.062, "ΔEp \(separation) V")
  }

  @Test func caFollowsCottrell() async throws {
    let packages = try await Self.run(
      Self.loop("meas_loop_ca e i 600m 10m 2", ["e", "i"]), cell: Self.redoxCell)
    #expect(packages.count == 200)
    for (n, package) in packages.enumerated() {
      let t = Double(n + 1) * 0.01
      // θ at 0.6 V is 1 − 1.6·10⁻⁷: the full Cottrell current nFAC√D/√(πt).
      let expected = Self.couple.normalPulseLimit(pulseTime: t)
      let i = try #require(package.current)
      #expect(abs(i - expected) / expected < 1e-4, "t \(t): \(i) A, Cottrell \(expected) A")
    }
  }

  @Test func dpvPeaksHalfAPulseBelowEHalfWithTheFormulasHeight() async throws {
    // 2 mV steps at 20 mV/s (0.1 s a point), 25 mV pulses of 5 ms.
    let packages = try await Self.run(
      Self.loop("meas_loop_dpv e i 0 400m 2m 25m 5m 20m", ["e", "i"]), cell: Self.redoxCell)
    #expect(packages.count == 201)
    let peak = Self.peak(Self.curve(packages))
    let expected = Self.couple.differentialPulsePeak(amplitude: 0.025, pulseTime: 0.005)
    // The formula assumes the base potential held since the start; the
    // staircase's history lowers the peak by a few percent.
    #expect(abs(peak.y - expected) / expected < 0.05, "peak \(peak.y) A, formula \(expected) A")
    #expect(abs(peak.x - (0.2 - 0.0125)) < 0.002, "peak at \(peak.x) V")
  }

  @Test func dpvOnTheDummyCellIsThePulseOverR() async throws {
    let packages = try await Self.run(
      Self.loop("meas_loop_dpv e i -100m 100m 10m 50m 10m 100m", ["e", "i"]), cell: .dummy)
    #expect(packages.count == 21)
    for package in packages {
      #expect(abs((package.current ?? 0) - 0.05 / 10_000) < 1e-10)
    }
  }

  @Test func swvPeaksAtEHalfWithTheSuperposedCottrellHeight() async throws {
    // 5 mV steps, 25 mV amplitude, 25 Hz.
    let packages = try await Self.run(
      Self.loop("meas_loop_swv e i f r 0 400m 5m 25m 25", ["e", "i", "f", "r"]), cell: Self.redoxCell)
    #expect(packages.count == 81)
    let peak = Self.peak(Self.curve(packages))
    #expect(abs(peak.x - 0.2) < 0.002, "peak at \(peak.x) V")
    // The reversible SWV current (Osteryoung): the sum of Cottrell terms of
    // every half-period potential change, sampled at each half period's end,
    // computed here from the waveform alone.
    let tau = 0.02
    let couple = Self.couple
    var changes: [(time: Double, change: Double)] = []
    var theta = 0.0
    func apply(_ e: Double, at time: Double) {
      let next = couple.oxidisedFraction(at: e)
      changes.append((time, next - theta))
      theta = next
    }
    func current(at time: Double) -> Double {
      changes.reduce(0) { $0 + $1.change / (time - $1.time).squareRoot() } * couple.scale / Double.pi.squareRoot()
    }
    var expected: [Double] = []
    for k in 0...80 {
      let e = Double(k) * 0.005
      let start = Double(k) * 2 * tau
      apply(e + 0.025, at: start)
      let forward = current(at: start + tau)
      apply(e - 0.025, at: start + tau)
      expected.append(forward - current(at: start + 2 * tau))
    }
    let peakExpected = expected.max()!
    for (package, net) in zip(packages, expected) {
      #expect(abs((package.current ?? 0) - net) < 1e-3 * peakExpected)
    }
    #expect(abs(packages[40].values[2].value - packages[40].values[3].value - expected[40]) < 1e-3 * peakExpected)
  }

  @Test func npvRisesToTheCottrellLimitWithItsHalfWaveAtEHalf() async throws {
    let packages = try await Self.run(
      Self.loop("meas_loop_npv e i 0 400m 2m 10m 4m", ["e", "i"]), cell: Self.redoxCell)
    let curve = Self.curve(packages)
    let limit = Self.couple.normalPulseLimit(pulseTime: 0.01)
    // Earlier pulses (10 ms every 0.5 s) leave a little depletion behind: within 3 %.
    #expect(abs(curve.last!.y - limit) / limit < 0.03, "limit \(curve.last!.y) A, Cottrell \(limit) A")
    let half = curve.last!.y / 2
    let above = curve.firstIndex { $0.y >= half }!
    let (a, b) = (curve[above - 1], curve[above])
    let halfWave = a.x + (half - a.y) / (b.y - a.y) * (b.x - a.x)
    #expect(abs(halfWave - 0.2) < 0.003, "E½ \(halfWave) V")
  }

  @Test func acvPeaksAtEHalfWithTheReversibleHeight() async throws {
    let packages = try await Self.run(
      Self.loop(
        "meas_loop_acv e i ea ia zr zi 0 400m 5m 50m 10m 15", ["e", "i", "ea", "ia", "zr", "zi"]),
      cell: Self.redoxCell)
    let curve = packages.map { ($0.values[0].value, $0.values[3].value) }
    let peak = Self.peak(curve)
    let expected = Self.couple.alternatingCurrentPeak(amplitude: 0.01, frequency: 15)
    #expect(abs(peak.x - 0.2) < 0.002, "peak at \(peak.x) V")
    #expect(abs(peak.y - expected) / expected < 0.01, "peak \(peak.y) A, formula \(expected) A")
    // A Warburg impedance: Z′ = −Z″.
    let top = packages[40]
    #expect(abs(top.values[4].value + top.values[5].value) < 1e-3 * top.values[4].value)
    #expect(top.values.map(\.type.code) == ["da", "ba", "ch", "cj", "cc", "cd"])
  }

  @Test func ocpSettlesAtTheRestPotentialWithTheInterfacesTimeConstant() async throws {
    let (rs, rct, cdl, rest) = (100.0, 1_000.0, 100e-6, 0.15)
    let script = """
      set_e 650m
      cell_on
      wait 2
      cell_off
      meas_loop_ocp e 10m 1
        pck_start
        pck_add e
        pck_end
      endloop
      """
    let packages = try await Self.run(
      script,
      cell: .randles(
        solutionResistance: rs, chargeTransferResistance: rct, doubleLayerCapacitance: cdl, restPotential: rest))
    #expect(packages.count == 100)
    // Charged to (E − Erest)·Rct/(Rs + Rct), then discharging through Rct.
    let charged = 0.5 * rct / (rs + rct)
    for (n, package) in packages.enumerated() {
      let t = Double(n + 1) * 0.01
      let expected = rest + charged * exp(-t / (rct * cdl))
      let e = try #require(package.values.first)
      #expect(e.type.code == "ab")
      #expect(abs(e.value - expected) < 1e-6, "t \(t): \(e.value) V, expected \(expected) V")
    }
  }

  @Test func cpFollowsTheRandlesCellsResponseToACurrentStep() async throws {
    let (rs, rct, cdl, rest) = (100.0, 1_000.0, 100e-6, -0.05)
    let script = """
      set_pgstat_mode 6
      set_i 0
      cell_on
      meas_loop_cp e i 200u 5m 1
        pck_start
        pck_add e
        pck_add i
        pck_end
      endloop
      on_finished:
        cell_off
      """
    let packages = try await Self.run(
      script,
      cell: .randles(
        solutionResistance: rs, chargeTransferResistance: rct, doubleLayerCapacitance: cdl, restPotential: rest))
    #expect(packages.count == 200)
    for (n, package) in packages.enumerated() {
      let t = Double(n + 1) * 0.005
      let expected = rest + 200e-6 * rs + 200e-6 * rct * (1 - exp(-t / (rct * cdl)))
      #expect(abs(package.values[0].value - expected) < 1e-6, "t \(t)")
      #expect(abs(package.values[1].value - 200e-6) < 1e-10)
    }
  }

  @Test func lspOnTheDummyCellIsOhmsLaw() async throws {
    let script = """
      set_pgstat_mode 6
      cell_on
      meas_loop_lsp e i -50u 50u 10u 100u
        pck_start
        pck_add i
        pck_add e
        pck_end
      endloop
      """
    let packages = try await Self.run(script, cell: .dummy)
    #expect(packages.count == 11)
    for package in packages {
      let (i, e) = (package.values[0].value, package.values[1].value)
      #expect(abs(e - i * 10_000) < 1e-6)
    }
  }

  @Test func aCurrentPastTheComplianceClipsThePotential() async throws {
    let packages = try await Self.run(
      "set_pgstat_mode 6\ncell_on\nmeas_loop_cp e i 1m 10m 50m\npck_start\npck_add e\npck_end\nendloop",
      cell: .dummy)
    #expect(packages.count == 5)
    for package in packages {
      #expect(abs(package.values[0].value - Potentiostat.complianceVoltage) < 1e-9)
    }
  }

  @Test(arguments: [(1, 0.1, 0.1 / 10_000), (2, 0.5, 0.5 / 10_000), (3, 0.1, 0.4 / 10_000)])
  func padReportsDCPulseOrTheirDifference(mode: Int, potential: Double, current: Double) async throws {
    let packages = try await Self.run(
      Self.loop("meas_loop_pad e i 100m 500m 10m 50m 500m \(mode)", ["e", "i"]), cell: .dummy)
    #expect(packages.count == 10)
    for package in packages {
      #expect(abs(package.values[0].value - potential) < 1e-9)
      #expect(abs(package.values[1].value - current) < 1e-10)
    }
  }

  @Test func geisMeasuresTheRandlesImpedance() async throws {
    let (rs, rct, cdl) = (100.0, 1_000.0, 1e-6)
    let cell = ElectrochemicalCell.randles(
      solutionResistance: rs, chargeTransferResistance: rct, doubleLayerCapacitance: cdl)
    let packages = try await Self.run(
      "set_pgstat_mode 6\ncell_on\n"
        + "meas_loop_geis f zr zi 10u 10k 1 9i 0\npck_start\npck_add f\npck_add zr\npck_add zi\npck_end\nendloop",
      cell: cell)
    #expect(packages.count == 9)
    for package in packages {
      let f = try #require(package.frequency)
      let z = cell.impedance(at: f)
      #expect(abs((package.zReal ?? 0) - z.real) < 1e-3 * rct)
      #expect(abs((package.zImaginary ?? 0) - z.imaginary) < 1e-3 * rct)
    }
  }

  @Test func eisOnRandlesWithTheCoupleDrawsTheWarburgTail() async throws {
    let cell = ElectrochemicalCell.randles(
      solutionResistance: 100, chargeTransferResistance: 1_000, doubleLayerCapacitance: 1e-6, redox: Self.couple)
    let packages = try await Self.run(
      Self.loop("meas_loop_eis f zr zi 10m 100k 100m 31i 200m", ["f", "zr", "zi"]), cell: cell)
    #expect(packages.count == 31)
    let sigma = try #require(Self.couple.warburgCoefficient(at: 0.2))
    // At the low end: Z ≈ Rs + Rct + σ(1 − j)/√ω (a 45° line).
    for package in packages where (package.frequency ?? 1) < 0.5 {
      let omega = 2 * Double.pi * (package.frequency ?? 0)
      let warburg = sigma / omega.squareRoot()
      #expect(abs((package.zReal ?? 0) - 1_100 - warburg) / warburg < 0.02)
      #expect(abs(-(package.zImaginary ?? 0) - warburg) / warburg < 0.02)
    }
    // At the high end: the semicircle's start, Rs.
    #expect(abs((packages.first?.zReal ?? 0) - 100) < 5)
  }
}
