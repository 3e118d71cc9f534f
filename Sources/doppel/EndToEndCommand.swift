import ArgumentParser
import DoppelKit
import Foundation

/// `doppel e2e FILE…`: scenarios' devices and their client stacks, with the
/// scenarios' expectations checked.
struct EndToEndCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "e2e",
    abstract: "Run scenarios' devices and their client stacks end to end, and check their expectations.",
    discussion: """
      Over BlueZ by default: each device on its adapter, each client on an adapter of its own. With --loopback, \
      in process and in virtual time. Folders run every scenario inside, one after another; --shard K/N runs \
      every Nth of them (for a CI job matrix). Exit status 0 when every expectation holds, 1 when one does not, \
      2 when a scenario is invalid (then none runs).
      """)

  @OptionGroup var logging: LoggingOptions

  @OptionGroup var selection: ScenarioSelection

  @OptionGroup var options: TransportOptions

  @OptionGroup var output: ReportOptions

  @Option(
    help: ArgumentHelp(
      "Cut every scenario that would run longer at this length (90s, 2m).",
      discussion: """
        For CI over a real stack, where a long scenario also runs whole in the loopback: a window keeps the checks \
        of rates, values, gaps, metrics and errors, and reports the counts only a whole run can meet (samples, \
        events, writes) as not checked (SKIP, and <skipped> in JUnit).
        """, valueName: "duration"))
  var window: String?

  func validate() throws {
    if let window {
      guard let length = ScenarioDuration.parse(window), length > .zero else {
        throw ValidationError("--window '\(window)' is not a duration (e.g. 90s, 2m, 1m30s)")
      }
    }
  }

  func run() async throws {
    logging.bootstrap("e2e")
    let scenarios = try selection.load()
    for scenario in scenarios where scenario.expectations.isEmpty {
      printError("\(scenario.file): error: the scenario has no 'expect' section, so e2e has nothing to check")
      throw ExitCode(2)
    }
    var reports: [ScenarioReport] = []
    for scenario in scenarios {
      print("e2e: '\(scenario.name)' \(options.loopback ? "in the loopback (virtual time)" : "over BlueZ")")
      let runner = ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings) { print($0) }
      let report: ScenarioReport
      do {
        report = try await runner.run(
          on: options.transport(), mode: .endToEnd, window: window.flatMap(ScenarioDuration.parse))
      } catch let error as ScenarioError {
        printError(error.description)
        throw ExitCode(2)
      }
      ScenarioSummary.print(report, scenario: scenario)
      let skipped =
        report.window.map {
          " (cut at \(ScenarioDuration.format($0)) by --window: \(report.countsNotChecked) count(s) not checked)"
        }
        ?? ""
      print("e2e: \(report.passed ? "PASS" : "FAIL")\(scenarios.count > 1 ? " \(scenario.file)" : "")\(skipped)")
      reports.append(report)
    }
    if let junit = output.junit {
      do {
        try JUnitReport.xml(reports).write(toFile: junit, atomically: true, encoding: .utf8)
      } catch {
        printError("cannot write the JUnit report to \(junit): \(error.localizedDescription)")
        throw ExitCode.failure
      }
    }
    if let report = output.report {
      try ReportFile.write(HTMLReport.page(reports, title: "doppel e2e"), to: report)
    }
    let failed = reports.filter { !$0.passed }.count
    if scenarios.count > 1 { print("e2e: \(reports.count - failed) of \(reports.count) scenarios passed") }
    if failed > 0 { throw ExitCode.failure }
  }
}
