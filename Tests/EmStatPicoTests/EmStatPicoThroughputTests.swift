import EmStatPico
import EmStatPicoClient
import GATT
import MethodScriptFormat
import Synchronization
import Testing

/// Points per second: the interpreter alone (no waiting), and the model with
/// the client over the loopback in virtual time (wall time measured). Prints
/// its figures; asserts only a floor far below them.
@Suite(.timeLimit(.minutes(2)))
struct EmStatPicoThroughputTests {
  /// CA at 1,000 points per second for `seconds`.
  static func ca(seconds: Int) -> String {
    """
    var c
    var p
    set_pgstat_mode 2
    set_autoranging ba 100n 1m
    set_e 200m
    cell_on
    meas_loop_ca p c 200m 1m \(seconds)
      pck_start
      pck_add p
      pck_add c
      pck_end
    endloop
    on_finished:
      cell_off
    """
  }

  @Test func interpreterPointsPerSecond() async throws {
    let started = ContinuousClock.now
    let lines = try await EmStatPicoPhysicsTests.run(Self.ca(seconds: 50), cell: .dummy, currentNoise: 1e-4)
    let elapsed = (ContinuousClock.now - started).seconds
    let points = lines.filter { $0.hasPrefix("P") }.count
    #expect(points == 50_000)
    let rate = Double(points) / elapsed
    print("EmStatPicoThroughput: interpreter \(Int(rate)) points/s (\(points) CA points in \(elapsed) s wall)")
    #expect(rate > 5_000)
  }

  /// One script per technique (about 2,000 points each, noise on), and the cell it runs on.
  static let techniques: [(name: String, loop: String, redox: Bool)] = [
    ("LSV", "meas_loop_lsv e i -500m 500m 500u 1", false),
    ("CV", "meas_loop_cv e i 0 500m -500m 1m 1", false),
    ("CA", "meas_loop_ca e i 200m 1m 2", false),
    ("DPV", "meas_loop_dpv e i 0 400m 200u 25m 5m 20m", true),
    ("SWV", "meas_loop_swv e i f r 0 400m 200u 25m 100", true),
    ("NPV", "meas_loop_npv e i 0 400m 200u 5m 20m", true),
    ("ACV", "meas_loop_acv e i ea ia zr zi 0 400m 200u 20m 10m 15", true),
    ("LSP", "meas_loop_lsp e i -50u 50u 50n 100u", false),
    ("CP", "meas_loop_cp e i 10u 1m 2", false),
    ("PAD", "meas_loop_pad e i 100m 500m 1m 5m 10 3", false),
    ("OCP", "meas_loop_ocp e 1m 2", false),
    ("EIS", "meas_loop_eis f zr zi 10m 100k 1 2000i 0", false),
    ("GEIS", "meas_loop_geis f zr zi 10u 100k 1 2000i 0", false),
  ]

  @Test(arguments: techniques.indices)
  func techniquePointsPerSecond(_ index: Int) async throws {
    let (name, loop, redox) = Self.techniques[index]
    let outputs = loop.split(separator: " ").dropFirst().prefix { Double($0) == nil && !$0.contains("m") }
    let script = """
      set_pgstat_mode \(["LSP", "CP", "GEIS"].contains(name) ? 6 : 3)
      set_autoranging ba 100n 5m
      cell_on
      \(loop)
        pck_start
      \(outputs.prefix(2).map { "pck_add \($0)" }.joined(separator: "\n"))
        pck_end
      endloop
      """
    let cell =
      redox
      ? ElectrochemicalCell.randles(
        solutionResistance: 100, chargeTransferResistance: 1_000, doubleLayerCapacitance: 1e-6, redox: RedoxCouple())
      : .dummy
    let started = ContinuousClock.now
    let lines = try await EmStatPicoPhysicsTests.run(script, cell: cell, currentNoise: 1e-4, impedanceNoise: 1e-3)
    let elapsed = (ContinuousClock.now - started).seconds
    let points = lines.filter { $0.hasPrefix("P") }.count
    #expect(points >= 1_900, "\(name): \(lines.prefix(3))")
    print(
      "EmStatPicoThroughput: \(name) \(Int(Double(points) / elapsed)) points/s (\(points) points in \(elapsed) s wall)")
    #expect(Double(points) / elapsed > 50)
  }

  @Test func aThousandPointDPVInTheLoopback() async throws {
    let rig = EmStatPicoRig()
    let model = EmStatPico(
      configuration: EmStatPicoConfiguration(
        cell: ElectrochemicalCell(circuit: .open, redox: RedoxCouple()), currentNoise: 1e-4))
    let client = try await rig.connect(model)
    // 1,001 points: 0 to 0.4 V in 0.4 mV steps, 0.1 s a point (100 s of virtual time).
    let script = """
      set_pgstat_mode 3
      set_autoranging ba 100n 1m
      cell_on
      meas_loop_dpv e i 0 400m 400u 25m 5m 4m
        pck_start
        pck_add e
        pck_add i
        pck_end
      endloop
      """
    let started = ContinuousClock.now
    let (events, error) = try await rig.run(script, on: client, device: model, step: .seconds(1), limit: .seconds(200))
    let elapsed = (ContinuousClock.now - started).seconds
    #expect(error == nil)
    let packages = EmStatPicoRig.packages(events)
    #expect(packages.count == 1_001)
    print("EmStatPicoThroughput: 1,001-point DPV in the loopback: \(elapsed) s wall (100 s virtual)")
    #expect(elapsed < 60)
  }

  @Test(arguments: [20, 244])
  func loopbackPointsPerSecond(payload: Int) async throws {
    let rig = EmStatPicoRig()
    let model = EmStatPico(configuration: EmStatPicoConfiguration(notificationPayload: payload))
    try await rig.air.host(model, preferredMTU: 247)
    let client = EmStatPicoClient(link: try rig.air.makeCentral(preferredMTU: 247), clock: rig.clock)
    try await client.connect(timeout: .seconds(5))
    let started = ContinuousClock.now
    let (events, error) = try await rig.run(Self.ca(seconds: 5), on: client, device: model)
    let elapsed = (ContinuousClock.now - started).seconds
    #expect(error == nil)
    let points = EmStatPicoRig.packages(events).count
    #expect(points == 5_000)
    let notifications = await model.notificationsSent
    print(
      "EmStatPicoThroughput: loopback (virtual time) \(payload)-byte notifications: \(Int(Double(points) / elapsed)) points/s wall, \(notifications) notifications"
    )
    #expect(await model.notificationsDropped == 0)
  }

  /// Output faster than one line per notification fills notifications when
  /// it may gather; sent at once, each line goes in a notification of its own.
  @Test(arguments: [Duration.zero, .microseconds(7_500)])
  func gatheredOutputFillsNotifications(gathering: Duration) async throws {
    let rig = EmStatPicoRig()
    let model = EmStatPico(configuration: EmStatPicoConfiguration(notificationPayload: 244, outputGathering: gathering))
    try await rig.air.host(model, preferredMTU: 247)
    let client = EmStatPicoClient(link: try rig.air.makeCentral(preferredMTU: 247), clock: rig.clock)
    try await client.connect(timeout: .seconds(5))
    let (events, error) = try await rig.run(Self.ca(seconds: 1), on: client, device: model)
    #expect(error == nil)
    let packages = EmStatPicoRig.packages(events)
    #expect(packages.count == 1_000)
    #expect(packages.allSatisfy { abs(($0.current ?? 0) - 20e-6) <= 20e-6 * 0.01 })
    let notifications = await model.notificationsSent
    #expect(await model.notificationsDropped == 0)
    // About 30 bytes a package: about one notification each sent at once,
    // about 7.5 packages (225 bytes) in each when gathered.
    if gathering > .zero {
      #expect(notifications < 160, "\(notifications) notifications")
    } else {
      #expect(notifications >= 900, "\(notifications) notifications")
    }
  }
}
