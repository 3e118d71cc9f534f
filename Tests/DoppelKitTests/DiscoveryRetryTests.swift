import DoppelKit
import Testing

/// A scenario client that finds nothing within its connect timeout reports
/// the error and looks again, as the vendors' apps do, and finds a device
/// that starts advertising later. (The Muse client once could not: its first
/// wait, timed out, ended the stream of device lists for every later one.)
@Suite(.timeLimit(.minutes(1)))
struct DiscoveryRetryTests {
  /// Each model with its client's setting for how long one look lasts.
  @Test(arguments: [
    ("blend-micro", "connect-timeout"), ("e4", "connect-timeout"), ("emstat-pico", "connect-timeout"),
    ("actigraph-link", "scan"), ("muse", "connect-timeout"),
  ])
  func aDeviceThatAdvertisesLateIsFoundOnALaterLook(_ model: String, _ look: String) async throws {
    let yaml = """
      scenario: \(model) advertising late
      seed: 3
      duration: 30s
      devices:
        - id: device
          model: \(model)
          advertise: false
          client: {\(look): 5s}
      timeline:
        - {at: 12s, device: device, do: advertise}
      expect:
        - event: {name: connected, count: 1}
      """
    let scenario = try DeviceCatalog.parser.parse(yaml: yaml, file: "late.yaml")
    let report = try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd)
    #expect(report.passed, "\(report.results.map(\.observed))")
    let connection = try #require(report.activity["device"]?.connections.first)
    #expect(connection.connectedAt >= 12, "connected at \(connection.connectedAt) s, before it advertised")
  }
}
