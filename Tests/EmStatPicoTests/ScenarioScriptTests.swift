import Foundation
import MethodScriptFormat
import Testing

@testable import EmStatPico

/// Every MethodSCRIPT shipped in Scenarios/ parses and runs to its end on the
/// cell it is written for, with well-formed packages.
@Suite struct ScenarioScriptTests {
  static var files: [String] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Scenarios")
    let enumerator = FileManager.default.enumerator(atPath: root.path)
    var files: [String] = []
    while let path = enumerator?.nextObject() as? String {
      if path.hasSuffix(".mscr") { files.append(root.appendingPathComponent(path).path) }
    }
    return files.sorted()
  }

  @Test func thereAreScripts() { #expect(Self.files.count >= 2) }

  /// The cell a script is written for, by its file name: `-redox` the
  /// reversible couple alone, `-randles` a Randles cell, otherwise the 10 kΩ dummy cell.
  static func cell(for file: String) -> ElectrochemicalCell {
    if file.contains("-redox") { return ElectrochemicalCell(circuit: .open, redox: RedoxCouple()) }
    if file.contains("-randles") {
      return .randles(
        solutionResistance: 100, chargeTransferResistance: 1_000, doubleLayerCapacitance: 100e-6, restPotential: 0.15)
    }
    return .dummy
  }

  @Test(arguments: ScenarioScriptTests.files)
  func runsToItsEnd(_ file: String) async throws {
    let text = try String(contentsOfFile: file, encoding: .utf8)
    let lines = try await EmStatPicoPhysicsTests.run(text, cell: Self.cell(for: file), currentNoise: 1e-4)
    #expect(lines.contains("M0000"))
    #expect(lines.last == "")
    #expect(!lines.contains { $0.contains("!") }, "\(lines.filter { $0.contains("!") })")
    let packages = try EmStatPicoPhysicsTests.packages(lines)
    #expect(packages.count >= 20)
    // On the dummy cell, LSV, CV and CA currents are E / R.
    let ohmic = ["meas_loop_lsv", "meas_loop_cv", "meas_loop_ca"].contains { text.contains($0) }
    guard ohmic, Self.cell(for: file) == .dummy else { return }
    for package in packages {
      let (e, i) = (try #require(package.potential), try #require(package.current))
      let fullScale = try #require(package.currentRange?.fullScale)
      #expect(abs(i - e / 10_000) < 6e-4 * fullScale)
    }
  }
}
