import DoppelKit
import Scenario
import Testing

/// `max-gap` catches what a rate or a count hides: a stall that loses a few
/// seconds of an otherwise steady stream. On an E4, whose client stamps
/// samples with the device's packet counters, so arrival times (which a
/// loaded machine can stretch in the loopback) play no part.
@Suite(.timeLimit(.minutes(1)))
struct GapExpectationTests {
  static func yaml(stall: Bool) -> String {
    """
    scenario: gap
    seed: 3
    duration: 8s
    devices:
      - id: wrist
        model: e4
    \(stall ? "timeline:\n  - {after: subscribed, delay: 3s, do: stall, for: 2s, drop: true}" : "")
    expect:
      - samples: {stream: bvp, min-count: 300, max-gap: 20ms}
    """
  }

  func run(stall: Bool) async throws -> ScenarioReport {
    let scenario = try DeviceCatalog.parser.parse(yaml: Self.yaml(stall: stall), file: "gap.yaml")
    return try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd)
  }

  @Test func aSteadyStreamHasNoGap() async throws {
    let report = try await run(stall: false)
    let bvp = try #require(report.observations["wrist"]?.streams["bvp"])
    #expect(report.passed, "\(report.results.map(\.observed))")
    // 64 Hz: consecutive samples 15.6 ms apart.
    #expect(abs((bvp.largestInterval ?? 0) - 1.0 / 64) < 1e-6)
  }

  @Test func aStallThatDropsSamplesFailsTheCheck() async throws {
    let report = try await run(stall: true)
    let result = try #require(report.results.first)
    #expect(!result.passed)
    let gap = try #require(report.observations["wrist"]?.streams["bvp"]?.largestInterval)
    // Two seconds of packets (eight samples each) never sent.
    #expect(gap > 1.9 && gap < 2.3, "longest gap \(gap) s")
    #expect(result.observed.contains("longest gap"))
    #expect(result.expected.contains("no gap over 20ms"))
  }
}
