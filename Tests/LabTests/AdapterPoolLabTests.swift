import DoppelKit
import Scenario
import Testing

extension LabTests {
  /// `doppel e2e --adapters`: a scenario run keeps to the adapters it is
  /// given, which is what lets the lab run scenarios side by side.
  @Suite(.enabled(if: Lab.adapterNames.count >= 4, "needs four adapters"), .timeLimit(.minutes(3)))
  struct AdapterPoolLabTests {
    static func scenario(adapter: String?) throws -> Scenario {
      let placement = adapter.map { "\n    adapter: \($0)" } ?? ""
      return try DeviceCatalog.parser.parse(
        yaml: """
          scenario: pool
          seed: 5
          duration: 60s
          devices:
            - id: board
              model: blend-micro\(placement)
          timeline:
            - {after: subscribed, delay: 3s, do: end}
          expect:
            - samples: {stream: ecg, min-count: 250}
          """, file: "pool.yaml")
    }

    @Test func aDevicePlacedNowhereGoesToThePoolsFirstAdapterAndItsClientToAnother() async throws {
      let pool = [Lab.adapterNames[2], Lab.adapterNames[3]]
      let transport = BlueZTransport(adapters: pool)
      let report = try await ScenarioRunner(scenario: Self.scenario(adapter: nil), bindings: DeviceCatalog.bindings)
        .run(on: transport, mode: .endToEnd)
      #expect(report.passed, "\(report.results.map(\.observed))")
      #expect(await transport.clientAdapter(for: "board")?.name == pool[1])
      #expect(await transport.hostAdapter(for: "board") == pool[0])
    }

    @Test func aDevicePlacedOutsideThePoolIsAnErrorBeforeAnythingRuns() async throws {
      let transport = BlueZTransport(adapters: [Lab.adapterNames[2], Lab.adapterNames[3]])
      let scenario = try Self.scenario(adapter: Lab.adapterNames[0])
      let error = await #expect(throws: ScenarioError.self) {
        try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
          .run(on: transport, mode: .endToEnd)
      }
      #expect(
        error?.description.contains("'board' is placed on \(Lab.adapterNames[0])") == true,
        "\(String(describing: error))")
      #expect(error?.description.contains("outside this run's adapters") == true)
      #expect(error?.line == scenario.devices[0].location.line)
    }
  }
}
