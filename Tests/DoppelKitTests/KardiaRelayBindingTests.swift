import DoppelKit
import Scenario
import Testing

/// The blend-micro client's `kardia-relay` setting in loopback runs.
@Suite(.timeLimit(.minutes(1)))
struct KardiaRelayBindingTests {
  static func run(relay: Bool, arrhythmia: String = "[]") async throws -> DeviceObservations? {
    let yaml = """
      scenario: kardia-relay-binding
      seed: 7
      duration: 30s
      devices:
        - id: board
          model: blend-micro
          streams:
            ecg: {ecg: {heart-rate: 90, noise: 0.01, arrhythmia: \(arrhythmia)}}
          client:
            kardia-relay: \(relay)
      timeline:
        - {after: subscribed, delay: 14s, do: end}
      expect:
        - no-errors: true
      """
    let scenario = try DeviceCatalog.parser.parse(yaml: yaml, file: "kardia-relay-binding.yaml")
    let report = try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd)
    let observed = report.results.map(\.observed)
    #expect(report.passed, "\(observed)")
    return report.observations["board"]
  }

  @Test func aRegularRhythmGivesTheServersHeartRateAndNoEpisode() async throws {
    let observed = try #require(try await Self.run(relay: true))
    let rate = try #require(observed.metrics["relay-heart-rate"])
    #expect(abs(rate - 90) <= 2)
    #expect(observed.events["abnormal-episode", default: 0] == 0)
    #expect(observed.errors.isEmpty)
  }

  @Test func anIrregularStretchIsReportedAsAnEpisode() async throws {
    let observed = try #require(try await Self.run(relay: true, arrhythmia: "[{from: 2s, to: 12s}]"))
    #expect(observed.events["abnormal-episode", default: 0] >= 1)
  }

  @Test func withoutTheSettingNothingIsRelayed() async throws {
    let observed = try #require(try await Self.run(relay: false))
    #expect(observed.metrics["relay-heart-rate"] == nil)
    #expect(observed.metrics["heart-rate"] != nil)
    #expect(observed.events["abnormal-episode"] == nil)
  }
}
