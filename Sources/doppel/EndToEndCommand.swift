import ArgumentParser
import DoppelKit
import Foundation

/// `doppel e2e FILE`: a scenario's devices and their client stacks, with the
/// scenario's expectations checked.
struct EndToEndCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "e2e",
    abstract: "Run a scenario's devices and their client stacks end to end, and check its expectations.",
    discussion: """
      Over BlueZ by default: each device on its adapter, each client on an adapter of its own. With --loopback, \
      in process and in virtual time. Exit status 0 when every expectation holds, 1 when one does not, 2 when \
      the scenario is invalid.
      """)

  @OptionGroup var options: ScenarioOptions

  @Option(help: "Also write the results as JUnit XML to this file.")
  var junit: String?

  func run() async throws {
    let scenario = try options.load()
    guard !scenario.expectations.isEmpty else {
      printError("\(scenario.file): error: the scenario has no 'expect' section, so e2e has nothing to check")
      throw ExitCode(2)
    }
    print("e2e: '\(scenario.name)' \(options.loopback ? "in the loopback (virtual time)" : "over BlueZ")")
    let runner = ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings) { print($0) }
    let report: ScenarioReport
    do {
      report = try await runner.run(on: options.transport(), mode: .endToEnd)
    } catch let error as ScenarioError {
      printError(error.description)
      throw ExitCode(2)
    }
    ScenarioSummary.print(report, scenario: scenario)
    if let junit {
      do {
        try JUnitReport.xml([report]).write(toFile: junit, atomically: true, encoding: .utf8)
      } catch {
        printError("cannot write the JUnit report to \(junit): \(error.localizedDescription)")
        throw ExitCode.failure
      }
    }
    print("e2e: \(report.passed ? "PASS" : "FAIL")")
    if !report.passed { throw ExitCode.failure }
  }
}
