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
