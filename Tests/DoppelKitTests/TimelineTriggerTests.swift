import DoppelKit
import Testing

/// A timeline event can wait for what the device's firmware understood the
/// central to do (`after: start-streaming`), and for the n-th time something
/// happens (`occurrence`), so a fault lands at the same point of a session
/// however long the central takes to get there.
@Suite(.timeLimit(.minutes(1)))
struct TimelineTriggerTests {
  func run(_ yaml: String) async throws -> ScenarioReport {
    let scenario = try DeviceCatalog.parser.parse(yaml: yaml, file: "triggers.yaml")
    return try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd)
  }

  /// The drop lands 3 s after the E4's first start command, and the run
  /// ends 4 s after the second one (the client's, once it has reconnected).
  @Test func firmwareEventsAndTheirOccurrencesTriggerTheTimeline() async throws {
    let report = try await run(
      """
      scenario: e4 dropped after streaming starts
      seed: 2
      duration: 60s
      devices:
        - id: wrist
          model: e4
      timeline:
        - {after: start-streaming, delay: 3s, do: disconnect}
        - {after: start-streaming, occurrence: 2, delay: 4s, do: end}
      expect:
        - firmware-event: {name: start-streaming, count: 2}
      """)
    #expect(report.passed, "\(report.results.map(\.observed))")
    let activity = try #require(report.activity["wrist"])
    let starts = activity.firmwareEvents.filter { $0.name == "start-streaming" }.map(\.at)
    try #require(starts.count == 2)
    let drop = try #require(activity.connections.first?.disconnectedAt)
    #expect(abs(drop - starts[0] - 3) < 0.1, "dropped at \(drop), streaming started at \(starts[0])")
    let end = report.elapsed / .seconds(1)
    #expect(abs(end - starts[1] - 4) < 0.1, "ended at \(end), streaming started again at \(starts[1])")
  }

  /// `occurrence` counts link events too: the second connection.
  @Test func theSecondConnectionTriggersItsEvent() async throws {
    let report = try await run(
      """
      scenario: blend micro, second connection
      seed: 2
      duration: 60s
      devices:
        - id: board
          model: blend-micro
      timeline:
        - {after: subscribed, delay: 2s, do: disconnect}
        - {after: connected, occurrence: 2, delay: 1s, do: end}
      """)
    let activity = try #require(report.activity["board"])
    try #require(activity.connections.count == 2)
    let end = report.elapsed / .seconds(1)
    #expect(abs(end - activity.connections[1].connectedAt - 1) < 0.1, "\(end), \(activity.connections)")
  }

  /// An EmStat's run can end when its measurement is done: the firmware
  /// reports `script-done` as the script's last line leaves, and every point
  /// has been counted by the time the run ends 2 s later.
  @Test func anEmStatsRunEndsAfterItsScriptIsDone() async throws {
    let report = try await run(
      """
      scenario: emstat ends after its script
      seed: 3
      duration: 60s
      devices:
        - id: pico
          model: emstat-pico
          config: {cell: resistor, resistance: 10000}
      timeline:
        - {after: script-done, delay: 2s, do: end}
      expect:
        - event: {name: script-ended, count: 1}
        - samples: {stream: current, min-count: 101, max-count: 101}
        - firmware-event: {name: script-done, count: 1}
      """)
    #expect(report.passed, "\(report.results.map(\.observed))")
    let activity = try #require(report.activity["pico"])
    let done = try #require(activity.firmwareEvents.first { $0.name == "script-done" })
    #expect(done.detail == "completed")
    let script = try #require(activity.firmwareEvents.first { $0.name == "script" })
    #expect(done.at > script.at)
    let end = report.elapsed / .seconds(1)
    #expect(abs(end - done.at - 2) < 0.1, "ended at \(end), the script was done at \(done.at)")
  }
}
