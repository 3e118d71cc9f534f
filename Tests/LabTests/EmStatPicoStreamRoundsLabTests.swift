import BlueZ
import EmStatPico
import EmStatPicoClient
import GATT
import Glibc
import Synchronization
import Testing

extension LabTests {
  /// Round after round of the EmStat Pico's fastest stream through BlueZ:
  /// 5 s of chronoamperometry at 1,000 points per second, in notifications
  /// of up to 244 bytes sent as D-Bus signals, each round with a new device
  /// and a new client. Every point must arrive. `ci/bench-pico-rounds` runs
  /// it on several lanes at once (a loaded lab) with `DOPPEL_PICO_ROUNDS`
  /// rounds; CI does not run it (EmStatPicoLabTests streams once).
  @Suite
  struct EmStatPicoStreamRoundsLabTests {
    @Test(.timeLimit(.minutes(30)))
    func everyRoundDeliversEveryPoint() async throws {
      let rounds = Int(Lab.environment["DOPPEL_PICO_ROUNDS"] ?? "") ?? 3
      var failed = 0
      for round in 1...rounds {
        let model = EmStatPico(
          configuration: EmStatPicoConfiguration(
            name: "EmStat Pico", currentNoise: 0, impedanceNoise: 0, notificationPayload: 244))
        try await LabSession.run { lab in
          let peripheral = try await lab.host(
            model, on: 0, name: "emstatpicoround\(round)", notificationSockets: false)
          let client = EmStatPicoClient(link: try await lab.central(on: 1))
          try await client.connect(namePrefix: "EmStat Pico", timeout: .seconds(60))
          let started = ContinuousClock.now
          let run = await EmStatPicoLabTests.streamFastCA(
            seconds: 5, lineTimeout: .seconds(15), client: client, model: model, peripheral: peripheral)
          // What went wrong, if anything: the stream broke, or points are missing.
          let failure = run.broke ?? (run.packages.count == 5_000 ? nil : "\(run.packages.count) of 5000 points")
          let elapsed = (ContinuousClock.now - started).seconds
          if let failure {
            failed += 1
            print("pico-rounds: round \(round) FAILED after \(elapsed) s: \(failure)")
          } else {
            print("pico-rounds: round \(round) ok in \(elapsed) s, 5000 points")
          }
          fflush(nil)
          await client.disconnect()
        }
      }
      print("pico-rounds: \(failed) of \(rounds) rounds failed")
      fflush(nil)
      #expect(failed == 0)
    }
  }
}
