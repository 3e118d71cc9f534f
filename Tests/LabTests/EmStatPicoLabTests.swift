import BlueZ
import EmStatPico
import EmStatPicoClient
import GATT
import MethodScriptFormat
import Synchronization
import Testing

extension LabTests {
  /// The emulated EmStat Pico on hci0 and the client on hci1, through
  /// bluetoothd and the kernel's virtual controllers: LSV and CA, every point
  /// in order with the values the cell gives.
  @Suite
  struct EmStatPicoLabTests {
    static let lsv = """
      e
      var c
      var p
      set_pgstat_chan 0
      set_pgstat_mode 3
      set_max_bandwidth 200
      set_range ba 100u
      set_autoranging ba 100n 1m
      set_e -500m
      cell_on
      meas_loop_lsv p c -500m 500m 10m 500m
        pck_start
        pck_add p
        pck_add c
        pck_end
      endloop
      on_finished:
        cell_off

      """

    /// 5 s at 200 points per second, with the device's time of each point.
    static let ca = """
      e
      var c
      var p
      var t
      set_pgstat_chan 0
      set_pgstat_mode 2
      set_range ba 100u
      set_autoranging ba 100n 1m
      set_e 200m
      cell_on
      timer_start
      meas_loop_ca p c 200m 5m 5
        timer_get t
        pck_start
        pck_add t
        pck_add c
        pck_end
      endloop
      on_finished:
        cell_off

      """

    static func packages(
      _ stream: AsyncThrowingStream<MeasurementEvent, any Error>, seeing: (MeasurementEvent) -> Void = { _ in }
    ) async throws
      -> (packages: [MethodScriptPackage], events: [MeasurementEvent])
    {
      var packages: [MethodScriptPackage] = []
      var others: [MeasurementEvent] = []
      for try await event in stream {
        seeing(event)
        if case .package(let package) = event { packages.append(package) } else { others.append(event) }
      }
      return (packages, others)
    }

    @Test(.timeLimit(.minutes(4)))
    func lsvAndCAOnTheDummyCellDeliverEveryPoint() async throws {
      let model = EmStatPico(
        configuration: EmStatPicoConfiguration(name: "EmStat Pico", currentNoise: 0, impedanceNoise: 0))
      try await LabSession.run { lab in
        _ = try await lab.host(model, on: 0, name: "emstatpico")
        let client = EmStatPicoClient(link: try await lab.central(on: 1))
        try await client.connect(namePrefix: "EmStat Pico", timeout: .seconds(60))
        #expect(try await client.sendCommandVersion(timeout: .seconds(10)) == "testpico#Aug 2 2019 11:06:07")

        // LSV: 101 points, −0.5 V … 0.5 V, I = E / 10 kΩ within the encoding.
        let lsv = try await Self.packages(try await client.sendMethodScript(Self.lsv, lineTimeout: .seconds(20)))
        #expect(lsv.events.first == .scriptAccepted)
        #expect(lsv.events.contains(.loopStarted(id: "0000")))
        #expect(lsv.events.last == .loopEnded)
        #expect(lsv.packages.count == 101)
        for (n, package) in lsv.packages.enumerated() {
          let e = try #require(package.potential)
          let i = try #require(package.current)
          #expect(abs(e - (-0.5 + Double(n) * 0.01)) <= 0.5e-6 * 1.000_001, "point \(n)")
          let unit = try #require(package.first(.weCurrent)).prefix.factor
          #expect(abs(i - e / 10_000) <= (unit / 2 + 0.5e-6 / 10_000) * 1.000_001, "point \(n)")
        }

        // CA: 1,000 points of 20 µA, in the device's time order.
        let started = ContinuousClock.now
        let ca = try await Self.packages(try await client.sendMethodScript(Self.ca, lineTimeout: .seconds(20)))
        let elapsed = ContinuousClock.now - started
        #expect(ca.packages.count == 1_000)
        let times = ca.packages.compactMap(\.time)
        #expect(times.count == 1_000)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "in order")
        #expect(times.first.map { $0 >= 0.005 - 1e-6 } == true)
        #expect(ca.packages.allSatisfy { abs(($0.current ?? 0) - 20e-6) <= 0.5e-9 * 1.000_001 })
        #expect(await model.notificationsDropped == 0)
        print(
          "EmStatPicoLabTests: CA 1000 points delivered in \(elapsed) (\(1000 / elapsed.seconds) points/s)"
        )
        await client.disconnect()
      }
    }

    /// CA at 1,000 points per second for `seconds`.
    static func fastCA(seconds: Int) -> String {
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

    /// `fastCA(seconds:)` streamed to `client`: its points, when its loop
    /// started, and, when the stream broke, where: its error, what the client
    /// had taken, and what the device and the peripheral sent.
    static func streamFastCA(
      seconds: Int, lineTimeout: Duration, client: EmStatPicoClient, model: EmStatPico, peripheral: BlueZPeripheral
    ) async -> (packages: [MethodScriptPackage], loopStarted: ContinuousClock.Instant?, broke: String?) {
      let seen = Mutex((events: 0, last: MeasurementEvent?.none, loopStarted: ContinuousClock.Instant?.none))
      do {
        let run = try await packages(
          try await client.sendMethodScript(fastCA(seconds: seconds), lineTimeout: lineTimeout)
        ) { event in
          seen.withLock { seen in
            seen.events += 1
            seen.last = event
            if case .loopStarted = event { seen.loopStarted = ContinuousClock.now }
          }
        }
        return (run.packages, seen.withLock { $0.loopStarted }, nil)
      } catch {
        let (events, last, loopStarted) = seen.withLock { ($0.events, $0.last, $0.loopStarted) }
        let broke =
          "\(error), with \(events) events taken (the last: \(last.map { "\($0)" } ?? "none")); the device sent \(await model.notificationsSent) notifications (\(await model.notificationsDropped) dropped), the peripheral handed bluetoothd \(await peripheral.notificationsSent)"
        return ([], loopStarted, broke)
      }
    }

    /// Sustained CA points per second through BlueZ, 20-byte notifications
    /// (the module as PalmSens describes it) beside notifications up to
    /// ATT_MTU − 3 (sent at once, and gathered for up to 7.5 ms to fill
    /// them), each with the peripheral's notifications as D-Bus signals
    /// (`PropertiesChanged`) and on an `AcquireNotify` socket, in one run
    /// (EmStatPicoThroughputTests gives the loopback's figures).
    @Test(.timeLimit(.minutes(10)))
    func caPointsPerSecondThroughTheLab() async throws {
      var figures: [String] = []
      let gathering = Duration.microseconds(7_500)
      for (payload, seconds, gather) in [(20, 1, Duration.zero), (244, 5, .zero), (244, 5, gathering)] {
        for sockets in [false, true] {
          let path =
            (sockets ? "AcquireNotify socket" : "PropertiesChanged") + (gather > .zero ? ", output gathered" : "")
          let model = EmStatPico(
            configuration: EmStatPicoConfiguration(
              name: "EmStat Pico", currentNoise: 0, impedanceNoise: 0, notificationPayload: payload,
              outputGathering: gather))
          try await LabSession.run { lab in
            let peripheral = try await lab.host(
              model, on: 0, name: "emstatpico\(payload)\(sockets ? "s" : "d")", notificationSockets: sockets)
            let client = EmStatPicoClient(link: try await lab.central(on: 1))
            try await client.connect(namePrefix: "EmStat Pico", timeout: .seconds(60))
            let started = ContinuousClock.now
            let run = await Self.streamFastCA(
              seconds: seconds, lineTimeout: .seconds(30), client: client, model: model, peripheral: peripheral)
            if let broke = run.broke {
              Issue.record("\(payload)-byte notifications, \(path): \(broke)")
              await client.disconnect()
              return
            }
            let ended = ContinuousClock.now
            let elapsed = (ended - started).seconds
            let loop = (ended - (run.loopStarted ?? started)).seconds
            #expect(run.packages.count == 1_000 * seconds, "\(payload)-byte notifications, \(path)")
            #expect(run.packages.allSatisfy { abs(($0.current ?? 0) - 20e-6) <= 0.5e-9 * 1.000_001 })
            #expect(await model.notificationsDropped == 0)
            let notifications = await model.notificationsSent
            let acquired = await peripheral.acquiredNotificationSockets
            #expect(sockets ? acquired >= 1 : acquired == 0, "BlueZ acquired \(acquired) sockets")
            await client.disconnect()
            figures.append(
              "lab, \(payload)-byte notifications, \(path): \(run.packages.count) points in \(elapsed) s = \(Int(Double(run.packages.count) / elapsed)) points/s (\(Int(Double(run.packages.count) / loop)) from the loop's start), \(notifications) notifications"
            )
          }
        }
      }
      for line in figures { print("EmStatPicoLabBenchmark: \(line)") }
    }

  }
}
