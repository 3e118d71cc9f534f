import DoppelKit
import Scenario
import Testing

/// `doppel e2e --window`: a long scenario cut short keeps its checks of
/// rates, values and errors, and reports the counts only a whole run can
/// meet as not checked, never as passed.
@Suite(.timeLimit(.minutes(1)))
struct WindowTests {
  static func yaml(rate: Int = 64, end: String = "") -> String {
    """
    scenario: window
    seed: 5
    duration: 60s
    devices:
      - id: wrist
        model: e4
    \(end)
    expect:
      - connected-within: 10s
      - samples: {stream: bvp, min-count: 3500, rate: \(rate) ± 2%}
      - samples: {stream: eda, min-count: 200}
      - event: {name: ibi, min: 40}
      - no-errors: true
    """
  }

  func run(_ yaml: String, window: Duration?) async throws -> ScenarioReport {
    let scenario = try DeviceCatalog.parser.parse(yaml: yaml, file: "window.yaml")
    return try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd, window: window)
  }

  @Test func aWindowChecksRatesAndLeavesCountsUnchecked() async throws {
    let report = try await run(Self.yaml(), window: .seconds(10))
    #expect(report.window == .seconds(10))
    #expect(report.elapsed <= .seconds(10.2))
    #expect(report.passed, "\(report.results.map { "\($0.verdict) \($0.expected): \($0.observed)" })")
    #expect(report.results.map(\.verdict) == ["PASS", "PASS", "SKIP", "SKIP", "PASS"])
    // The rate was checked; the count beside it was not, and the text says so.
    #expect(report.results[1].expected.contains("not checked in the window"))
    // A count alone is not checked, and is not a pass either.
    #expect(!report.results[2].passed && report.results[2].notChecked?.contains("10s") == true)
    #expect(report.notChecked == 2)
  }

  @Test func aWrongRateStillFailsInAWindow() async throws {
    let report = try await run(Self.yaml(rate: 50), window: .seconds(10))
    #expect(!report.passed)
    #expect(report.results[1].verdict == "FAIL")
  }

  @Test func aScenarioThatEndsInsideTheWindowIsCheckedWhole() async throws {
    let ends = "timeline:\n  - {at: 5s, do: end}"
    let report = try await run(Self.yaml(end: ends), window: .seconds(30))
    #expect(report.window == nil)
    #expect(report.notChecked == 0)
    // Five seconds cannot meet the whole run's counts, and nothing hides that.
    #expect(!report.passed)
    #expect(report.results[1].verdict == "FAIL")
  }

  @Test func junitMarksUncheckedCountsSkipped() async throws {
    let report = try await run(Self.yaml(), window: .seconds(10))
    let xml = JUnitReport.xml([report])
    #expect(xml.contains("failures=\"0\" skipped=\"2\""))
    #expect(xml.components(separatedBy: "<skipped message=").count == 3)
  }
}
