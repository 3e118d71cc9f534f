import DoppelKit
import Scenario
import Testing

/// `max-gap` catches what a rate or a count hides: a stall that loses a few
/// seconds of an otherwise steady stream.
@Suite(.timeLimit(.minutes(1)))
struct GapExpectationTests {
  static func yaml(stall: Bool) -> String {
    """
    scenario: gap
    seed: 3
    duration: 8s
    devices:
      - id: board
        model: blend-micro
    \(stall ? "timeline:\n  - {after: subscribed, delay: 3s, do: stall, for: 2s, drop: true}" : "")
    expect:
      - samples: {stream: ecg, min-count: 300, max-gap: 100ms}
    """
  }

  func run(stall: Bool) async throws -> ScenarioReport {
    let scenario = try DeviceCatalog.parser.parse(yaml: Self.yaml(stall: stall), file: "gap.yaml")
    return try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd)
  }

  @Test func aSteadyStreamHasNoGap() async throws {
    let report = try await run(stall: false)
    let ecg = try #require(report.observations["board"]?.streams["ecg"])
    #expect(report.passed, "\(report.results.map(\.observed))")
    // 100 Hz: consecutive samples 10 ms apart by arrival time; on a loaded
    // machine a sample may be stamped a tick late, never seconds.
    let gap = try #require(ecg.largestInterval)
    #expect(gap >= 0.0099 && gap < 0.05, "longest gap \(gap) s")
  }

  @Test func aStallThatDropsSamplesFailsTheCheck() async throws {
    let report = try await run(stall: true)
    let result = try #require(report.results.first)
    #expect(!result.passed)
    let gap = try #require(report.observations["board"]?.streams["ecg"]?.largestInterval)
    #expect(gap > 1.9 && gap < 2.2, "longest gap \(gap) s")
    #expect(result.observed.contains("longest gap"))
    #expect(result.expected.contains("no gap over 100ms"))
  }
}
