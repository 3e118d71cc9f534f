import DoppelKit
import Testing

/// Device-side expectations judge what the device saw its central do. Here
/// the centrals are Doppel's own clients in the loopback, made to behave well
/// or badly by their settings; `doppel test` judges any other central the
/// same way over BlueZ.
@Suite(.timeLimit(.minutes(1)))
struct DeviceSideExpectationTests {
  func run(_ yaml: String) async throws -> ScenarioReport {
    let scenario = try DeviceCatalog.parser.parse(yaml: yaml, file: "device-side.yaml")
    return try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd)
  }

  func result(_ report: ScenarioReport, _ index: Int) -> ScenarioReport.Result { report.results[index] }

  /// The E4's client reconnects after the link drops, and subscribes again.
  @Test func aCentralThatComesBackPassesEveryCheck() async throws {
    let report = try await run(
      """
      scenario: e4 link lost
      seed: 2
      duration: 30s
      devices:
        - id: wrist
          model: e4
      timeline:
        - {after: subscribed, characteristic: bvp, delay: 5s, do: disconnect}
      expect:
        - central-connected-within: 10s
        - central-subscribed: {characteristic: bvp, within: 10s}
        - central-wrote: {characteristic: command, hex: "^01.{8}", min: 2}
        - central-reconnected: {within: 10s, subscribed-again: [bvp, eda]}
        - central-stayed-subscribed: bvp
        - no-att-errors: true
        - firmware-event: {name: start-streaming, min: 2}
      """)
    for result in report.results {
      #expect(result.passed, "\(result.expected): \(result.observed)")
    }
    let activity = try #require(report.activity["wrist"])
    #expect(activity.connections.count == 2)
    #expect(activity.connections.first?.endedBy == .local)
    #expect(activity.faultDisconnects.count == 1)
    // The drop came 5 s after the first subscription to bvp.
    let subscribed = try #require(activity.subscriptions.first { $0.characteristic == "bvp" && $0.subscribed })
    let drop = try #require(activity.connections.first?.disconnectedAt)
    #expect(abs(drop - subscribed.at - 5) < 0.1, "dropped at \(drop), subscribed at \(subscribed.at)")
  }

  /// A central that never comes back fails `central-reconnected`, and the
  /// failure says what was missing.
  @Test func aCentralThatStaysAwayFailsAndSaysWhy() async throws {
    let report = try await run(
      """
      scenario: blend micro, no reconnect
      seed: 2
      duration: 20s
      devices:
        - id: board
          model: blend-micro
          client: {reconnect: false}
      timeline:
        - {after: subscribed, delay: 3s, do: disconnect}
      expect:
        - central-reconnected: {within: 10s, subscribed-again: uart-tx}
        - central-stayed-subscribed: uart-tx
        - central-wrote: {characteristic: uart-rx, min: 1}
      """)
    #expect(!result(report, 0).passed)
    #expect(result(report, 0).observed.contains("never connected again"), "\(result(report, 0).observed)")
    #expect(!result(report, 1).passed)
    #expect(result(report, 1).observed.contains("unsubscribed from 'uart-tx'"), "\(result(report, 1).observed)")
    #expect(!result(report, 2).passed)
    #expect(result(report, 2).observed == "0 matching of 0 writes to 'uart-rx'")
  }

  /// The EmStat's firmware reports each command and the verdict on each
  /// script; a malformed script is refused, and the checks can tell.
  @Test func firmwareEventsCarryTheFirmwaresVerdict() async throws {
    let report = try await run(
      """
      scenario: emstat malformed script
      seed: 2
      duration: 10s
      devices:
        - id: pico
          model: emstat-pico
          client:
            reconnect: false
            script: "e\\nvar c\\nmeas_loop_lsv p c -500m 500m 10m 500m\\n  pck_start\\nendloop\\n\\n"
      expect:
        - firmware-event: {name: script-refused, count: 1}
        - firmware-event: {name: script, count: 0}
        - firmware-event: {name: command, min: 2}
        - central-wrote: {characteristic: rx-fifo, text: "^e", min: 1}
      """)
    for result in report.results {
      #expect(result.passed, "\(result.expected): \(result.observed)")
    }
    let refused = report.activity["pico"]?.firmwareEvents.first { $0.name == "script-refused" }
    #expect(refused?.detail.hasPrefix("!") == true, "\(String(describing: refused))")
  }

  /// An ATT error the device answered is seen, with the characteristic and the error's name.
  @Test func attErrorsAreReportedWithTheirName() async throws {
    let report = try await run(
      """
      scenario: writes refused
      seed: 2
      duration: 10s
      devices:
        - id: pico
          model: emstat-pico
          client: {reconnect: false}
      timeline:
        - {at: 0s, do: reject-writes, error: write-not-permitted}
      expect:
        - no-att-errors: true
      """)
    let check = try #require(report.results.first)
    #expect(!check.passed)
    #expect(check.observed.contains("write-not-permitted"), "\(check.observed)")
  }
}
