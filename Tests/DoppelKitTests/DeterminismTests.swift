import BlendMicro
import DoppelKit
import GATT
import Loopback
import Scenario
import Signals
import Testing

/// The same scenario with the same seed gives the same device output: run
/// after run, and in virtual time as in wall time.
@Suite(.timeLimit(.minutes(1)))
struct DeterminismTests {
  static let yaml = """
    scenario: determinism
    seed: 42
    duration: 3s
    devices:
      - id: noisy
        model: blend-micro
        name: Noisy
        streams:
          ecg:
            sum: [{sine: {amplitude: 0.5, frequency: 1.3}}, {noise: {sd: 0.2}}]
      - id: heart
        model: blend-micro
        name: Heart
        streams:
          ecg: {ecg: {heart-rate: 80, noise: 0.05}}
    expect:
      - {device: noisy, samples: {stream: ecg, min-count: 250}}
      - {device: heart, samples: {stream: ecg, min-count: 250}}
    """

  func scenario() throws -> Scenario {
    try DeviceCatalog.parser.parse(yaml: Self.yaml, file: "determinism.yaml")
  }

  /// The first `count` notifications a device of the scenario sends, over a loopback on `clock`.
  func output(of id: String, count: Int, clock: any Clock<Duration>, drive: (@Sendable () async -> Void)? = nil)
    async throws -> [String]
  {
    let scenario = try scenario()
    let spec = try #require(scenario.device(id))
    let binding = try BlendMicroBinding(device: spec, signals: SignalFactory(scenario: scenario))
    let air = LoopbackAir(clock: clock)
    let peripheral = try await air.host(binding.model)
    let connection = try await air.makeCentral().connect(peripheral, timeout: .seconds(5))
    let values = try await connection.notifications(of: BlendMicro.tx)
    let collect = Task {
      var texts: [String] = []
      for try await value in values {
        texts.append(String(decoding: value, as: UTF8.self))
        if texts.count == count { break }
      }
      return texts
    }
    await drive?()
    let texts = try await collect.value
    await air.removeAll()
    return texts
  }

  @Test(arguments: ["noisy", "heart"])
  func virtualAndWallTimeSendTheSameValues(_ id: String) async throws {
    let virtual = VirtualClock()
    let inVirtualTime = try await output(of: id, count: 50, clock: virtual) {
      await virtual.advance(by: .seconds(1))
    }
    let inWallTime = try await output(of: id, count: 50, clock: ContinuousClock())
    #expect(inVirtualTime.count == 50)
    #expect(inVirtualTime == inWallTime)
  }

  @Test func runsWithTheSameSeedObserveTheSame() async throws {
    let scenario = try scenario()
    let runner = ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
    let first = try await runner.run(on: LoopbackTransport(), mode: .endToEnd)
    let second = try await runner.run(on: LoopbackTransport(), mode: .endToEnd)
    #expect(first.passed && second.passed)
    for id in ["noisy", "heart"] {
      let a = try #require(first.observations[id]?.streams["ecg"])
      let b = try #require(second.observations[id]?.streams["ecg"])
      #expect(a.count == b.count)
      #expect(a.minimum == b.minimum && a.maximum == b.maximum && a.mean == b.mean)
    }
    // Different devices get different noise from the one scenario seed.
    #expect(first.observations["noisy"]?.streams["ecg"]?.mean != first.observations["heart"]?.streams["ecg"]?.mean)
  }
}
