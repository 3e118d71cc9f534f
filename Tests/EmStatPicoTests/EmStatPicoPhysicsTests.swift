import Foundation
import MethodScriptFormat
import Synchronization
import Testing

@testable import EmStatPico

/// The interpreter on simulated cells, checked against the circuits' physics.
@Suite struct EmStatPicoPhysicsTests {
  /// Runs a script on `cell` and returns its output lines (without `\n`).
  static func run(
    _ text: String, cell: ElectrochemicalCell, currentNoise: Double = 0, impedanceNoise: Double = 0
  ) async throws -> [String] {
    let script = try MethodScriptParser().parse(text: text).get()
    let lines = Mutex<[String]>([])
    var interpreter = MethodScriptInterpreter(
      cell: cell, potentiostat: Potentiostat(noiseFraction: currentNoise, impedanceNoise: impedanceNoise, seed: 7),
      background: nil, abort: AbortSignal(), output: { line in lines.withLock { $0.append(line) } })
    await interpreter.run(script, clock: SteppingClock())
    return lines.withLock { $0 }
  }

  static func packages(_ lines: [String]) throws -> [MethodScriptPackage] {
    try lines.filter { $0.hasPrefix("P") }.map { try MethodScriptPackage(line: $0) }
  }

  static let lsv = """
    var c
    var p
    set_pgstat_chan 0
    set_pgstat_mode 3
    set_max_bandwidth 200
    set_range_minmax da -500m 500m
    set_range ba 100u
    set_autoranging ba 100n 1m
    set_e -500m
    cell_on
    meas_loop_lsv p c -500m 500m 10m 1
      pck_start
      pck_add p
      pck_add c
      pck_end
    endloop
    on_finished:
      cell_off
    """

  @Test func lsvOnTenKiloohmsGivesOhmsLawAtEveryPoint() async throws {
    let lines = try await Self.run(Self.lsv, cell: .dummy)
    #expect(lines.first == "M0000")
    #expect(lines.suffix(2) == ["*", ""])
    let packages = try Self.packages(lines)
    #expect(packages.count == 101)
    for (n, package) in packages.enumerated() {
      let e = try #require(package.potential)
      let i = try #require(package.current)
      let eValue = try #require(package.first(.appliedPotential))
      let iValue = try #require(package.first(.weCurrent))
      // The set potential to within its encoding, the current to E/R within
      // both encodings' half units.
      #expect(abs(e - (-0.5 + Double(n) * 0.01)) <= eValue.prefix.factor / 2 * 1.000_001)
      let tolerance = iValue.prefix.factor / 2 + eValue.prefix.factor / 2 / 10_000
      #expect(abs(i - e / 10_000) <= tolerance * 1.000_001, "point \(n): E \(e) I \(i)")
      #expect(package.status?.contains(.overload) == false)
      let range = try #require(package.currentRange)
      #expect(range.isHighSpeed)
      #expect((range.fullScale ?? 0) >= abs(i))
    }
  }

  @Test func lsvWithNoiseStaysWithinTheRangesNoise() async throws {
    let lines = try await Self.run(Self.lsv, cell: .dummy, currentNoise: 1e-4)
    for package in try Self.packages(lines) {
      let (e, i) = (package.potential ?? .nan, package.current ?? .nan)
      let fullScale = package.currentRange?.fullScale ?? 0
      #expect(abs(i - e / 10_000) < 6e-4 * fullScale)
    }
  }

  static let eis = """
    var f
    var r
    var j
    set_pgstat_chan 0
    set_pgstat_mode 3
    set_max_bandwidth 1M
    set_range ba 100u
    set_autoranging ba 100n 5m
    set_e 0
    cell_on
    meas_loop_eis f r j 10m 100k 100m 31i 0
      pck_start
      pck_add f
      pck_add r
      pck_add j
      pck_end
    endloop
    on_finished:
      cell_off
    """

  @Test(arguments: [0.0, 1e-3])
  func eisOnARandlesCellMatchesTheAnalyticImpedance(noise: Double) async throws {
    let (rs, rct, cdl) = (100.0, 1_000.0, 1e-6)
    let lines = try await Self.run(
      Self.eis, cell: .randles(solutionResistance: rs, chargeTransferResistance: rct, doubleLayerCapacitance: cdl),
      currentNoise: noise / 10, impedanceNoise: noise)
    let packages = try Self.packages(lines)
    #expect(packages.count == 31)
    #expect(abs((packages.first?.frequency ?? 0) - 1e5) < 1e-3)
    #expect(abs((packages.last?.frequency ?? 0) - 0.1) < 1e-9)
    for package in packages {
      let f = try #require(package.frequency)
      let (re, im) = (try #require(package.zReal), try #require(package.zImaginary))
      // Z = Rs + Rct / (1 + jωRctCdl)
      let x = 2 * Double.pi * f * rct * cdl
      let expected = (real: rs + rct / (1 + x * x), imaginary: -rct * x / (1 + x * x))
      let magnitude = (expected.real * expected.real + expected.imaginary * expected.imaginary).squareRoot()
      let error = ((re - expected.real) * (re - expected.real) + (im - expected.imaginary) * (im - expected.imaginary))
        .squareRoot()
      #expect(error < 0.01 * magnitude, "f \(f): Z \(re) \(im)j, expected \(expected)")
      // The phase too (within 1 degree).
      let phase = atan2(im, re) * 180 / .pi
      let expectedPhase = atan2(expected.imaginary, expected.real) * 180 / .pi
      #expect(abs(phase - expectedPhase) < 1)
    }
  }

  @Test func caSamplesAtItsIntervalOnARCCell() async throws {
    let script = """
      var c
      var p
      var t
      set_pgstat_mode 2
      set_autoranging ba 100n 5m
      set_e 0
      cell_on
      timer_start
      meas_loop_ca p c 500m 5m 1
        timer_get t
        pck_start
        pck_add t
        pck_add c
        pck_end
      endloop
      on_finished:
        cell_off
      """
    let (r, c) = (1_000.0, 100e-6)
    let lines = try await Self.run(script, cell: .seriesRC(resistance: r, capacitance: c))
    let packages = try Self.packages(lines)
    #expect(packages.count == 200)
    for (n, package) in packages.enumerated() {
      let t = try #require(package.time)
      #expect(abs(t - Double(n + 1) * 0.005) < 1e-6)
      // I = E/R e^(−t/RC), the potential stepped at t = 0.
      let expected = 0.5 / r * exp(-t / (r * c))
      let i = try #require(package.current)
      let unit = try #require(package.first(.weCurrent)).prefix.factor
      #expect(abs(i - expected) <= unit / 2 + 1e-12 * expected, "t \(t)")
    }
  }
}
