import DoppelKit
import Scenario
import Testing

/// The blend-micro client's `kardia-relay` setting in loopback runs.
@Suite(.timeLimit(.minutes(1)))
struct KardiaRelayBindingTests {
  static func run(relay: Bool, arrhythmia: String = "[]", disconnect: Bool = false) async throws
    -> DeviceObservations?
  {
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
      \(disconnect ? "  - {after: subscribed, delay: 6s, do: disconnect}" : "")
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

  /// Every end of the board's link goes to the server as the app sent it,
  /// `/BLEDisconnect`: the one dropped mid-run, and the one the end of the run
  /// closes (the app sent it on any disconnection).
  @Test func aDroppedLinkReachesTheServerAsBLEDisconnect() async throws {
    let dropped = try #require(try await Self.run(relay: true, disconnect: true))
    #expect(dropped.events["disconnected", default: 0] >= 1)
    #expect(dropped.metrics["relay-ble-disconnects-heard"] == 2)
    let quiet = try #require(try await Self.run(relay: true))
    #expect(quiet.metrics["relay-ble-disconnects-heard"] == 1)
  }

  /// The report gets the app's screen: the server's heart rate, its status
  /// and the trace of the last 15 values.
  @Test func theAppsScreenIsDrawnForTheReport() async throws {
    let observed = try #require(try await Self.run(relay: true))
    let screen = try #require(observed.drawings["Kardia app"])
    let rate = try #require(observed.metrics["relay-heart-rate"])
    #expect(screen.contains(">\(Int(rate))<"))
    #expect(screen.contains(">NSR<"))
    let trace = try #require(screen.split(separator: "points=\"").dropFirst().first?.split(separator: "\"").first)
    #expect(trace.split(separator: " ").count == 15)
  }

  @Test func withoutTheSettingNothingIsRelayed() async throws {
    let observed = try #require(try await Self.run(relay: false))
    #expect(observed.metrics["relay-heart-rate"] == nil)
    #expect(observed.metrics["heart-rate"] != nil)
    #expect(observed.events["abnormal-episode"] == nil)
    #expect(observed.drawings.isEmpty)
  }
}
