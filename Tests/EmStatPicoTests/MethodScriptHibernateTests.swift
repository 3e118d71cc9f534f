import EmStatPicoClient
import MethodScriptFormat
import Testing

@testable import EmStatPico

/// `hibernate` and the real-time clock: a script sleeps without output until
/// its timer, the WAKE pin or the host wakes it; the RTC runs on the host
/// clock.
@Suite(.timeLimit(.minutes(1)))
struct MethodScriptHibernateTests {
  @Test func theTimerWakesItArraysAreLostAndTheRTCRunsOn() async throws {
    let clock = SteppingClock()
    let origin = clock.now
    let peripherals = PicoPeripherals()
    peripherals.clock.attach(uptime: { origin.duration(to: clock.now).seconds })
    let events = LinesBox()
    var withEvents = peripherals
    withEvents.event = { name, _ in await events.append(name) }
    let script = try MethodScriptParser().parse(
      text: """
        var t
        array a 2i
        store_var a[1i] 5i ja
        rtc_set 2026 2 28 23 59 50
        timer_start
        hibernate 0x04i 15
        timer_get t
        rtc_get y mo d h mi s
        pck_start
        pck_add t
        pck_add a[1i]
        pck_end
        send_string f"{y}-{mo}-{d} {h}:{mi}:{s}"
        """
    ).get()
    let lines = LinesBox()
    var interpreter = MethodScriptInterpreter(
      cell: .dummy, potentiostat: Potentiostat(noiseFraction: 0, impedanceNoise: 0, seed: 1), background: nil,
      abort: AbortSignal(), peripherals: withEvents, output: { await lines.append($0) })
    await interpreter.run(script, clock: clock)
    let output = await lines.lines
    let package = try MethodScriptPackage(line: try #require(output.first))
    #expect(abs(package.values[0].value - 15) < 1e-9)
    #expect(package.values[1].value == 0)
    #expect(output.dropFirst().first == "T2026-3-1 0:0:5")
    #expect(await events.lines == ["hibernate", "wake"])
    #expect(
      peripherals.clock.now == RealTimeClock.DateTime(year: 2026, month: 3, day: 1, hour: 0, minute: 0, second: 5))
  }

  @Test(arguments: ["hibernate 0i 1", "hibernate 8i 1", "hibernate 1i -1", "rtc_set 2026 2 30 0 0 0"])
  func badSourcesTimesAndDatesAreRefused(_ line: String) async throws {
    switch MethodScriptParser().parse(text: line) {
    case .failure(let error):
      #expect(error.code == .argumentOutOfRange)
    case .success(let script):
      // A date is checked when it is set.
      let lines = LinesBox()
      var interpreter = MethodScriptInterpreter(
        cell: .dummy, potentiostat: Potentiostat(noiseFraction: 0, impedanceNoise: 0, seed: 1), background: nil,
        abort: AbortSignal(), output: { await lines.append($0) })
      await interpreter.run(script, clock: SteppingClock())
      #expect(await lines.lines == ["!4007: Line 1, Col 1"])
    }
  }

  @Test func theWakePinWakesAScriptInTheLoopback() async throws {
    let rig = EmStatPicoRig()
    let model = EmStatPico(configuration: EmStatPicoConfiguration(currentNoise: 0, impedanceNoise: 0))
    let client = try await rig.connect(model)
    let script = """
      var t
      timer_start
      hibernate 0x02i 60
      timer_get t
      pck_start
      pck_add t
      pck_end
      """
    let (events, error) = try await rig.run(
      script, on: client, device: model,
      during: { elapsed in
        if elapsed == .milliseconds(1_500) { await model.pressWakePin() }
      })
    #expect(error == nil)
    let t = try #require(EmStatPicoRig.packages(events).first?.time)
    // Woken within one polling interval (0.1 s) of the press, not by the 60 s timer it was not given.
    #expect(t >= 1.4 && t <= 1.7, "woke after \(t) s")
  }

  @Test func aLineFromTheHostWakesAScriptThatListens() async throws {
    let rig = EmStatPicoRig()
    let model = EmStatPico(configuration: EmStatPicoConfiguration(currentNoise: 0, impedanceNoise: 0))
    let client = try await rig.connect(model)
    let script = """
      var t
      timer_start
      hibernate 0x01i 0
      timer_get t
      pck_start
      pck_add t
      pck_end
      """
    let (events, error) = try await rig.run(
      script, on: client, device: model,
      during: { elapsed in
        if elapsed == .seconds(2) { try? await client.sendMessage("?\n") }
      })
    #expect(error == nil)
    let t = try #require(EmStatPicoRig.packages(events).first?.time)
    #expect(t >= 1.9 && t <= 2.2, "woke after \(t) s")
  }

  @Test func anEndlessLoopTakesDeviceTimeAndStopsAtZ() async throws {
    let rig = EmStatPicoRig()
    let model = EmStatPico(configuration: EmStatPicoConfiguration(currentNoise: 0, impedanceNoise: 0))
    let client = try await rig.connect(model)
    let script = """
      var i
      store_var i 0i ja
      loop 1i == 1i
        add_var i 1i
      endloop
      on_finished:
        pck_start
        pck_add i
        pck_end
      """
    let (events, error) = try await rig.run(
      script, on: client, device: model, step: .milliseconds(10),
      during: { elapsed in
        if elapsed == .milliseconds(200) { try? await client.abort() }
      })
    #expect(error == nil)
    #expect(events.contains(.abortAcknowledged))
    // 4 µs an iteration: about 50,000 in the 0.2 s before `Z`.
    let count = try #require(EmStatPicoRig.packages(events).first?.values.first?.value)
    #expect(count > 45_000 && count < 55_000, "\(count) iterations")
  }
}
