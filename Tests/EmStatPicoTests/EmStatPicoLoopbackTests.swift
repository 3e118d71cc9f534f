import EmStatPico
import EmStatPicoClient
import GATT
import MethodScriptFormat
import Testing

/// The emulated Pico and the client over the loopback: commands, LSV and CA
/// with every point in order, errors, abort, flow control.
@Suite(.timeLimit(.minutes(2)))
struct EmStatPicoLoopbackTests {
  let rig = EmStatPicoRig()

  static func quiet(_ cell: ElectrochemicalCell = .dummy) -> EmStatPico {
    EmStatPico(configuration: EmStatPicoConfiguration(cell: cell, currentNoise: 0, impedanceNoise: 0))
  }

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

  /// PalmSens' CA: 5 s at 200 points per second.
  static let ca = """
    var c
    var p
    set_pgstat_chan 0
    set_pgstat_mode 2
    set_max_bandwidth 400
    set_range ba 100u
    set_autoranging ba 100n 1m
    set_e 200m
    cell_on
    meas_loop_ca p c 200m 5m 5
      pck_start
      pck_add p
      pck_add c
      pck_end
    endloop
    on_finished:
      cell_off
    """

  @Test func versionSerialAndMethodScriptVersion() async throws {
    let client = try await rig.connect(Self.quiet())
    #expect(try await client.sendCommandVersion() == "testpico#Aug 2 2019 11:06:07")
    #expect(try await client.serialNumber() == "ESPICO0001")
    #expect(try await client.methodScriptVersion() == "1.8")
  }

  @Test func lsvDeliversEveryPointInOrderWithOhmsLaw() async throws {
    let client = try await rig.connect(Self.quiet())
    let (events, error) = try await rig.run(Self.lsv, on: client)
    #expect(error == nil)
    #expect(events.first == .scriptAccepted)
    #expect(events[1] == .loopStarted(id: "0000"))
    #expect(events.last == .loopEnded)
    let packages = EmStatPicoRig.packages(events)
    #expect(packages.count == 101)
    for (n, package) in packages.enumerated() {
      let e = try #require(package.potential)
      let i = try #require(package.current)
      #expect(abs(e - (-0.5 + Double(n) * 0.01)) <= 0.5e-6 * 1.000_001)
      let unit = try #require(package.first(.weCurrent)).prefix.factor
      #expect(abs(i - e / 10_000) <= (unit / 2 + 0.5e-6 / 10_000) * 1.000_001)
    }
    // Chunks of at most 20 bytes.
    #expect(await client.writesMade >= (await client.bytesWritten + 19) / 20)
  }

  @Test func caDeliversEveryPointAtTwoHundredPerSecond() async throws {
    let model = Self.quiet(.resistor(2_000))
    let client = try await rig.connect(model)
    let start = rig.clock.now
    let (events, error) = try await rig.run(Self.ca, on: client, device: model, step: .milliseconds(50))
    #expect(error == nil)
    let packages = EmStatPicoRig.packages(events)
    #expect(packages.count == 1_000)
    #expect(packages.allSatisfy { abs(($0.potential ?? 0) - 0.2) < 1e-9 })
    #expect(packages.allSatisfy { abs(($0.current ?? 0) - 1e-4) <= 0.5e-9 * 1.000_001 })
    #expect(packages.allSatisfy { $0.status?.contains(.overload) == false })
    // 1,000 points at 5 ms take 5 s of device time.
    let taken = start.duration(to: rig.clock.now)
    #expect(taken >= .seconds(5) && taken <= .seconds(5.2))
    #expect(await model.notificationsDropped == 0)
  }

  @Test func aMalformedScriptAnswersTheDevicesErrorLine() async throws {
    let model = Self.quiet()
    let client = try await rig.connect(model)
    let (events, error) = try await rig.run("var c\nmeas_loop_lsv p c 0 1 0 1\nendloop", on: client)
    #expect(events == [.scriptAccepted])
    let failure = try #require(error as? EmStatPicoClientError)
    #expect(failure.code == .device(code: 0x4007, detail: ": Line 2, Col 23"))
    #expect(await model.lastError?.description == "!4007: Line 2, Col 23")
    // The device is idle again and answers commands.
    #expect(try await client.serialNumber() == "ESPICO0001")
  }

  @Test func unknownCommandsAndAbortWhenIdleAnswerErrorLines() async throws {
    try await rig.air.host(Self.quiet())
    let central = try rig.air.makeCentral()
    var found: DiscoveredPeripheral?
    for await peripheral in central.scan(filter: ScanFilter(serviceUUIDs: [EmStatPico.vspService])) {
      found = peripheral
      break
    }
    let connection = try await central.connect(try #require(found).id, timeout: .seconds(5))
    var notifications = try await connection.notifications(of: EmStatPico.txFIFO).makeAsyncIterator()
    try await connection.write(Array("F\n".utf8), to: EmStatPico.rxFIFO, type: .withResponse)
    try await connection.write(Array("Z\n".utf8), to: EmStatPico.rxFIFO, type: .withResponse)
    var text = ""
    while text.filter({ $0 == "\n" }).count < 2, let bytes = try await notifications.next() {
      text += String(decoding: bytes, as: UTF8.self)
    }
    #expect(text == "F!0003\nZ!0006\n")
  }

  @Test func aScriptStoredInFlashRunsAgainFromFlash() async throws {
    let model = Self.quiet()
    let client = try await rig.connect(model)
    // Nothing loaded yet: `r` and `Lmscr` are not valid now.
    await #expect(throws: EmStatPicoClientError.self) { try await client.loadMethodScriptFromFlash() }
    await #expect(throws: EmStatPicoClientError.self) { try await client.storeMethodScriptInFlash() }
    try await client.loadMethodScript(Self.lsv)
    #expect(await model.scriptsStarted == 0)
    try await client.storeMethodScriptInFlash()
    #expect(await model.flashScript?.first == "var c")
    // Another script replaces the one in RAM; the flash keeps the LSV.
    try await client.loadMethodScript("var x\nstore_var x 1i ja\npck_start\npck_add x\npck_end")
    let (loaded, loadedError) = try await rig.collect(try await client.runLoadedMethodScript(), device: model)
    #expect(loadedError == nil)
    #expect(EmStatPicoRig.packages(loaded).map(\.line) == ["Pja8000001i"])
    let (events, error) = try await rig.collect(try await client.runMethodScriptFromFlash(), device: model)
    #expect(error == nil)
    #expect(events.first == .scriptAccepted)
    #expect(EmStatPicoRig.packages(events).count == 101)
    // A refused script leaves the loaded one in place.
    await #expect(throws: EmStatPicoClientError.self) { try await client.loadMethodScript("bogus") }
    let (again, _) = try await rig.collect(try await client.runLoadedMethodScript(), device: model)
    #expect(EmStatPicoRig.packages(again).count == 101)
  }

  @Test func runWithNothingLoadedAnswersInvalidNow() async throws {
    let client = try await rig.connect(Self.quiet())
    let stream = try await client.runLoadedMethodScript()
    await #expect(throws: EmStatPicoClientError.self) {
      for try await _ in stream {}
    }
  }

  @Test func abortStopsTheLoopAndEndsTheScript() async throws {
    let model = Self.quiet()
    let client = try await rig.connect(model)
    let (events, error) = try await rig.run(
      Self.ca, on: client, device: model,
      during: { elapsed in
        if elapsed == .seconds(1) { try? await client.abort() }
      })
    #expect(error == nil)
    #expect(events.contains(.abortAcknowledged))
    #expect(events.last == .loopEnded)
    let count = EmStatPicoRig.packages(events).count
    // About 200 at 1 s; fewer when a loaded machine lets the device lag behind virtual time.
    #expect(count > 0 && count < 300, "\(events.prefix(5)) … \(events.suffix(5)), \(String(describing: error))")
    #expect(await model.isRunningScript == false)
  }

  @Test func aLostNotificationLosesOnlyWhatItCarried() async throws {
    let model = Self.quiet()
    let client = try await rig.connect(model)
    await model.dropNextNotifications(3)
    let (events, error) = try await rig.run(Self.lsv, on: client)
    #expect(error == nil)
    #expect(await model.notificationsDropped == 3)
    // 60 bytes are lost: the lines they held (at most 4 packages) are gone or
    // arrive as fragments; every package that arrives is intact and in order.
    let packages = EmStatPicoRig.packages(events)
    #expect(packages.count >= 97 && packages.count < 101)
    let potentials = packages.compactMap(\.potential)
    #expect(potentials == potentials.sorted())
    #expect(potentials.last.map { abs($0 - 0.5) < 1e-6 } == true)
    for package in packages {
      let (e, i) = (package.potential ?? .nan, package.current ?? .nan)
      #expect(abs(i - e / 10_000) <= 1e-9)
    }
    #expect(events.last == .loopEnded)
  }

  @Test func theLinkEndingMidMeasurementFailsTheStream() async throws {
    let model = Self.quiet()
    let client = try await rig.connect(model)
    let (events, error) = try await rig.run(
      Self.ca, on: client, device: model,
      during: { elapsed in
        if elapsed == .seconds(2) { await model.disconnectCentrals() }
      })
    // The link's own error (GATT: disconnected by the remote side).
    #expect(error != nil)
    let count = EmStatPicoRig.packages(events).count
    #expect(count > 0 && count < 450)
  }

  @Test func theClientWaitsWhileTheModuleClearsCTS() async throws {
    let model = Self.quiet()
    let client = try await rig.connect(model)
    await model.setClearToSend(false)
    await rig.clock.advance(by: .milliseconds(10))
    #expect(await client.clearToSend == false)
    let commandsBefore = await model.commands.count
    let version = Task { try await client.sendCommandVersion(timeout: .seconds(30)) }
    await rig.clock.advance(by: .seconds(1))
    #expect(await model.commands.count == commandsBefore, "nothing written while CTS is off")
    await model.setClearToSend(true)
    for _ in 0..<50 where await model.commands.count == commandsBefore {
      await rig.clock.advance(by: .milliseconds(20))
    }
    #expect(try await version.value == "testpico#Aug 2 2019 11:06:07")
  }

  @Test func theModuleHoldsItsOutputWhileTheHostPauses() async throws {
    let model = Self.quiet()
    try await rig.air.host(model)
    let central = try rig.air.makeCentral()
    var found: DiscoveredPeripheral?
    for await peripheral in central.scan(filter: ScanFilter(serviceUUIDs: [EmStatPico.vspService])) {
      found = peripheral
      break
    }
    let connection = try await central.connect(try #require(found).id, timeout: .seconds(5))
    var notifications = try await connection.notifications(of: EmStatPico.txFIFO).makeAsyncIterator()
    try await connection.write([0x00], to: EmStatPico.modemIn, type: .withResponse)
    try await connection.write(Array("i\n".utf8), to: EmStatPico.rxFIFO, type: .withResponse)
    await rig.clock.advance(by: .seconds(1))
    #expect(await model.notificationsSent == 0)
    #expect(await model.commands == ["i"])
    try await connection.write([0x01], to: EmStatPico.modemIn, type: .withResponse)
    var text = ""
    while !text.hasSuffix("\n"), let bytes = try await notifications.next() {
      text += String(decoding: bytes, as: UTF8.self)
    }
    #expect(text == "iESPICO0001\n")
  }

  @Test func aSecondCommandWhileOneWaitsIsBusy() async throws {
    let model = Self.quiet()
    let client = try await rig.connect(model)
    let stream = try await client.sendMethodScript(Self.ca)
    await #expect(throws: EmStatPicoClientError.self) { _ = try await client.serialNumber() }
    try await client.abort()
    let collector = Task {
      for try await _ in stream {}
      return true
    }
    for _ in 0..<50 {
      await rig.clock.advance(by: .milliseconds(100))
      if await !model.isRunningScript { break }
    }
    #expect(try await collector.value)
    #expect(try await client.serialNumber() == "ESPICO0001")
  }

  /// A line timeout ends a script's stream when no line came for that long
  /// (and frees the client), not while lines keep coming more often: its
  /// one watch sleeps again from the last line.
  @Test func aLineTimeoutEndsOnlyAStreamThatFellSilent() async throws {
    let model = Self.quiet()
    let client = try await rig.connect(model)
    // A point a second for 8 s: lines 1 s apart, under a timeout of 1.5 s.
    let everySecond = Self.ca.replacingOccurrences(of: "200m 5m 5", with: "200m 1 8")
    let steady = try await rig.collect(
      client.sendMethodScript(everySecond, lineTimeout: .milliseconds(1500)), device: model)
    #expect(steady.error == nil)
    #expect(EmStatPicoRig.packages(steady.events).count == 8)
    #expect(steady.events.last == .loopEnded)

    // A script that says nothing for 4 s after it is accepted.
    let silent = try await rig.collect(
      client.sendMethodScript("e\nwait 4\nsend_string \"late\"", lineTimeout: .milliseconds(1500)), device: model)
    #expect((silent.error as? EmStatPicoClientError)?.code == .timeout, "\(String(describing: silent.error))")
    #expect(silent.events == [.scriptAccepted])
    for _ in 0..<60 where await model.isRunningScript { await rig.clock.advance(by: .milliseconds(100)) }
    #expect(try await client.serialNumber() == "ESPICO0001")
  }
}
