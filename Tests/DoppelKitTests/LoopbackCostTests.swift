import DoppelKit
import GATT
import Scenario
import Testing

/// What a loopback run costs per notification, counted in jobs the
/// executor runs (each a switch between tasks or actors, about half a
/// microsecond): a count, unlike a time, is the same on a loaded machine. A
/// change that puts an actor hop or a relay task back on the path of every
/// notification fails here, not only in `ci/bench-loopback`.
@Suite(.timeLimit(.minutes(1)))
struct LoopbackCostTests {
  static func jobsPerSample(model: String, stream: String, config: String = "") async throws -> Double {
    let yaml = """
      scenario: cost
      seed: 1
      duration: 60s
      devices:
        - id: device
          model: \(model)
      \(config)
      expect:
        - samples: {stream: \(stream), min-count: 1}
      """
    let scenario = try DeviceCatalog.parser.parse(yaml: yaml, file: "cost.yaml")
    let transport = LoopbackTransport()
    let executor = try #require(transport.virtualClock.executor)
    let report = try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: transport, mode: .endToEnd)
    #expect(report.passed, "\(report.results.map(\.observed))")
    let samples = try #require(report.observations["device"]?.streams[stream]?.count)
    return Double(executor.jobsRun) / Double(samples)
  }

  /// One ECG sample per notification: the board's wake on the clock, and
  /// nothing more, as the client takes each reading on the board's own call
  /// (`BlendMicroClient.receiveReadings`; 1.0 jobs a sample measured, 2.0
  /// when the client woke for each, 12 when the observer, the fault plan and
  /// the clock's driver were tasks apart).
  @Test func aBlendMicroNotificationTakesOneJob() async throws {
    let jobs = try await Self.jobsPerSample(model: "blend-micro", stream: "ecg")
    #expect(jobs < 1.5, "\(jobs) jobs per sample")
  }

  /// Eight BVP samples a packet, decoded to the SDK's delegate in the
  /// reading task; counting the jobs of every stream's packets (acceleration,
  /// EDA, temperature, IBIs, battery) against the BVP samples: 1.5 measured.
  @Test func anE4SampleTakesUnderOneJob() async throws {
    let jobs = try await Self.jobsPerSample(model: "e4", stream: "bvp")
    #expect(jobs < 2, "\(jobs) jobs per BVP sample")
  }

  /// A chronoamperometry point of the EmStat Pico (10 a second): the
  /// interpreter's sleep, its line to the model's actor and the TX FIFO's
  /// pump, two notifications, the client's line and event. The client
  /// takes the notifications into its line FIFO on the sending call
  /// (`LineFIFO`, `NotificationStream.receiveEach`) and a running script's
  /// lines become events on that call too (`ScriptOutput`): 5.1 jobs a point
  /// measured here, the run's start included. With a task that woke for each
  /// line and went over to the client's actor, 11.1; with a reader task that
  /// did so for each notification as well, 15.4 `swift_task_enqueue` calls a
  /// point over an hour.
  @Test func anEmStatPicoPointTakesUnderSixJobs() async throws {
    let jobs = try await Self.jobsPerSample(
      model: "emstat-pico", stream: "current", config: Self.chronoamperometry(interval: "100m", seconds: 50))
    #expect(jobs < 6, "\(jobs) jobs per point")
  }

  /// A script that hibernates 20 s on the Pico's timer (`0x04i`) before a 1 s
  /// chronoamperometry (100 points): the hibernation takes the interpreter's
  /// wakes (every 100 ms) and nothing else. Until the client let go of
  /// virtual time when the Pico accepted the script, it paced it to real
  /// time up to the loop's start, a few jobs every virtual millisecond: 808
  /// jobs a point measured (and 22 s of wall time).
  @Test func aHibernationBeforeTheLoopTakesVirtualTime() async throws {
    let config = Self.chronoamperometry(interval: "10m", seconds: 1, before: "hibernate 0x04i 20")
    let jobs = try await Self.jobsPerSample(model: "emstat-pico", stream: "current", config: config)
    #expect(jobs < 20, "\(jobs) jobs per point")
  }

  /// A Muse streaming to the Arctop-shaped client: about 39 ticks a
  /// second, each sending the packets due (four EEG channels every 47 ms,
  /// accelerometer and gyroscope every 58 ms), counted against TP9's samples
  /// (12 a packet). The tick runs off the headband's actor, its state under
  /// a lock (`MuseStreamState`): 0.23 jobs a sample measured, 0.53 when each
  /// tick went over to the actor and back.
  @Test func aMuseEEGSampleTakesUnderAThirdOfAJob() async throws {
    let jobs = try await Self.jobsPerSample(model: "muse", stream: "tp9", config: "    name: Muse-1A2B")
    #expect(jobs < 0.33, "\(jobs) jobs per TP9 sample")
  }

  /// An EmStat Pico on the 10 kΩ dummy cell whose client runs a
  /// chronoamperometry at 200 mV (a point every `interval`, for `seconds`),
  /// after the script line `before`, if any.
  static func chronoamperometry(interval: String, seconds: Int, before: String? = nil) -> String {
    let lines =
      ["e", "var c", "var p"] + (before.map { [$0] } ?? [])
      + [
        "set_pgstat_chan 0", "set_pgstat_mode 2", "set_max_bandwidth 400", "set_range ba 100u",
        "set_autoranging ba 100n 1m", "set_e 200m", "cell_on", "meas_loop_ca p c 200m \(interval) \(seconds)",
        "  pck_start", "  pck_add p", "  pck_add c", "  pck_end", "endloop", "on_finished:", "  cell_off",
      ]
    return """
          config: {cell: resistor, resistance: 10000}
          client:
            script: |

      """ + lines.map { "          " + $0 }.joined(separator: "\n")
  }
}
