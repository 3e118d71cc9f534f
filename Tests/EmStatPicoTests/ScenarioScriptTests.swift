import Foundation
import MethodScriptFormat
import Testing

@testable import EmStatPico

/// Every MethodSCRIPT shipped in Scenarios/ parses and runs to its end on the
/// dummy cell, with well-formed packages.
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

  @Test(arguments: ScenarioScriptTests.files)
  func runsToItsEnd(_ file: String) async throws {
    let text = try String(contentsOfFile: file, encoding: .utf8)
    let lines = try await EmStatPicoPhysicsTests.run(text, cell: .dummy, currentNoise: 1e-4)
    #expect(lines.first == "M0000")
    #expect(lines.suffix(2) == ["*", ""])
    let packages = try EmStatPicoPhysicsTests.packages(lines)
    #expect(packages.count >= 100)
    for package in packages {
      let (e, i) = (try #require(package.potential), try #require(package.current))
      let fullScale = try #require(package.currentRange?.fullScale)
      #expect(abs(i - e / 10_000) < 6e-4 * fullScale)
    }
  }
}
