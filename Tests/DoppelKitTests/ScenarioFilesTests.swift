import DoppelKit
import Foundation
import Scenario
import Testing

/// Every scenario shipped in Scenarios/ is valid, and those meant for the
/// loopback pass there.
@Suite(.timeLimit(.minutes(2)))
struct ScenarioFilesTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  static var files: [String] {
    let folder = root.appendingPathComponent("Scenarios")
    let enumerator = FileManager.default.enumerator(atPath: folder.path)
    var files: [String] = []
    while let path = enumerator?.nextObject() as? String {
      if path.hasSuffix(".yaml") { files.append(folder.appendingPathComponent(path).path) }
    }
    return files.sorted()
  }

  @Test func thereAreScenariosForEveryModel() {
    let names = Self.files.map { URL(fileURLWithPath: $0).lastPathComponent }
    for model in DeviceCatalog.descriptions.map(\.model) {
      #expect(
        names.contains { $0 == "quick-start.yaml" } && Self.files.contains { $0.contains("/\(model)/") },
        "no quick start for \(model)")
      #expect(names.filter { $0.hasPrefix("\(model)-") }.count >= 2, "fewer than two fault scenarios for \(model)")
    }
  }

  @Test(arguments: ScenarioFilesTests.files)
  func validates(_ file: String) throws {
    let scenario = try DeviceCatalog.parser.parse(file: file)
    #expect(!scenario.expectations.isEmpty, "\(file) checks nothing")
  }

  @Test(arguments: ScenarioFilesTests.files)
  func passesInTheLoopback(_ file: String) async throws {
    let scenario = try DeviceCatalog.parser.parse(file: file)
    let transport = LoopbackTransport()
    let report = try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: transport, mode: .endToEnd)
    for result in report.results where !result.passed {
      Issue.record("\(result.expectation.location): expected \(result.expected), observed \(result.observed)")
    }
    #expect(!report.results.isEmpty)
    // Devices, clients and timeline all ran on the loopback's own thread.
    #expect(transport.virtualClock.sleepsOffExecutor == 0)
  }
}
