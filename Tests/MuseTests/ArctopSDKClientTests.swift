import ArctopSDK
import GATT
import Loopback
import Muse
import Signals
import Testing

/// The Arctop SDK-shaped client against the emulated Muse, over the loopback.
@Suite(.timeLimit(.minutes(1)))
struct ArctopSDKClientTests {
  let rig = MuseRig(executor: true)

  /// An initialised client with every listener registered, the headband hosted and found.
  func start(
    _ headband: MuseHeadband, service: ArctopPredictionService? = nil
  ) async throws -> (ArctopSDKClient, ArctopListenerLog, ArctopPredictionService) {
    let service = service ?? ArctopPredictionService(clock: rig.clock)
    try await rig.air.host(headband)
    let client = ArctopSDKClient(link: try rig.air.makeCentral(), clock: rig.clock, service: service)
    let log = ArctopListenerLog()
    #expect(try await client.initializeArctop(apiKey: "key", bundle: "com.example.app").get())
    await client.registerListener(log as any ArctopSdkListener)
    await client.registerListener(log as any ArctopQAListener)
    await client.registerListener(log as any ArctopSessionUploadListener)
    await client.registerListener(log as any ArctopRawDataListener)
    try await client.scanForAvailableDevices()
    await rig.clock.advance(by: .milliseconds(200))
    try await client.terminateScanForDevices()
    return (client, log, service)
  }

  func connect(_ client: ArctopSDKClient, _ name: String = "Muse-1A2B") async throws {
    try await client.connectSensorDevice(deviceId: name)
    await rig.clock.advance(by: .milliseconds(200))
    #expect(await client.connectionState == .connected)
  }

  @Test func aSessionFromScanToUpload() async throws {
    try await rig.run {
      let headband = MuseHeadband(configuration: MuseConfiguration(batteryLevel: 0.9))
      let (client, log, service) = try await start(headband)
      #expect(log.current.deviceLists == [["Muse-1A2B"]])
      #expect(try await client.isUserLoggedIn())
      #expect(try await client.checkUserCalibrationStatus().get() == .modelsAvailable)
      try await connect(client)
      #expect(log.current.states.map(\.1) == [.connecting, .connected])
      #expect(try await client.startPredictionSession(ArctopSDKPredictions.zone).get())
      await rig.clock.advance(by: .seconds(10))
      #expect(try await client.finishSession().get())
      try await client.disconnectSensorDevice()
      let seen = log.current
      #expect(seen.states.map(\.1) == [.connecting, .connected, .disconnectedUponRequest])
      #expect(seen.headband == [true])
      #expect(seen.quality.last == "TP9:good,AF7:good,AF8:good,TP10:good")
      // A window a second: 9 or 10 within the session, each QA-passed, each predicted.
      #expect((9...10).contains(seen.qa.count))
      #expect(seen.qa.allSatisfy { $0 == .passed })
      let focus = log.values(ArctopSDKPredictions.focus)
      #expect(focus.count == seen.qa.count)
      #expect(focus.allSatisfy { (0...100).contains($0) })
      #expect(seen.sessions == ["started zone", "finished"])
      #expect(seen.uploads == ["start", "progress 1.0", "complete"])
      #expect(await service.uploads.count == 1)
      #expect(seen.battery.allSatisfy { abs($0 - 90) < 0.1 })
      #expect(seen.errors.isEmpty)
      #expect(await client.malformedPackets == 0)
    }
  }

  @Test func eyesClosedRaiseAlphaAndLowerFocus() async throws {
    try await rig.run {
      let headband = MuseHeadband(configuration: MuseConfiguration(), seed: 4)
      let (client, log, _) = try await start(headband)
      try await connect(client)
      _ = try await client.startPredictionSession(ArctopSDKPredictions.zone).get()
      await rig.clock.advance(by: .seconds(20))
      await headband.setEyesClosed(true)
      await rig.clock.advance(by: .seconds(20))
      let powers = log.current.powers
      let focus = log.values(ArctopSDKPredictions.focus)
      func mean(_ values: some Collection<Double>) -> Double { values.reduce(0, +) / Double(values.count) }
      let alphaOpen = mean(powers.prefix(18).map(\.relativeAlpha))
      let alphaClosed = mean(powers.suffix(18).map(\.relativeAlpha))
      #expect(alphaClosed > 1.5 * alphaOpen, "relative alpha \(alphaOpen) → \(alphaClosed)")
      #expect(mean(focus.suffix(15).map(Double.init)) < mean(focus.prefix(15).map(Double.init)) - 10)
      // Blinks with the eyes open, none with them closed.
      let blinks = log.values(ArctopSDKPredictions.blink)
      #expect(blinks.prefix(18).contains(1))
      #expect(!blinks.suffix(15).contains(1))
    }
  }

  @Test func headbandOffFailsQAAndPredictsMinusOne() async throws {
    try await rig.run {
      let headband = MuseHeadband()
      let (client, log, _) = try await start(headband)
      try await connect(client)
      _ = try await client.startPredictionSession(ArctopSDKPredictions.zone).get()
      await rig.clock.advance(by: .seconds(5))
      await headband.setOnHead(false)
      await rig.clock.advance(by: .seconds(5))
      await headband.setOnHead(true)
      await rig.clock.advance(by: .seconds(5))
      let seen = log.current
      #expect(seen.headband == [true, false, true])
      #expect(seen.qa.contains(.headbandOffHead))
      #expect(seen.quality.contains("TP9:off,AF7:off,AF8:off,TP10:off"))
      #expect(log.values(ArctopSDKPredictions.focus).contains(-1))
      #expect(seen.qa.last == .passed)
    }
  }

  @Test func motionFailsQA() async throws {
    try await rig.run {
      let headband = MuseHeadband(acceleration: [
        SineSignal(amplitude: 0.5, frequency: 2), ConstantSignal(0), ConstantSignal(1),
      ])
      let (client, log, _) = try await start(headband)
      try await connect(client)
      _ = try await client.startPredictionSession(ArctopSDKPredictions.zone).get()
      await rig.clock.advance(by: .seconds(3))
      #expect(log.current.qa.allSatisfy { $0 == .motionTooHigh } && !log.current.qa.isEmpty)
    }
  }

  @Test func aServiceOutageIsReportedOnceAndPredictionsResume() async throws {
    try await rig.run {
      let service = ArctopPredictionService(clock: rig.clock)
      let headband = MuseHeadband()
      let (client, log, _) = try await start(headband, service: service)
      try await connect(client)
      _ = try await client.startPredictionSession(ArctopSDKPredictions.zone).get()
      await rig.clock.advance(by: .seconds(3))
      let before = log.values(ArctopSDKPredictions.focus).count
      await service.setAvailability(.down)
      await rig.clock.advance(by: .seconds(5))
      let during = log.values(ArctopSDKPredictions.focus).count
      #expect(during == before)
      #expect(log.current.errors.map(\.code) == [.serviceUnreachable])
      await service.setAvailability(.stall)
      await rig.clock.advance(by: .seconds(3))
      await service.setAvailability(.up)
      await rig.clock.advance(by: .seconds(5))
      #expect(log.values(ArctopSDKPredictions.focus).count > during + 3)
      // EEG kept coming throughout.
      #expect(log.current.qa.count >= 15)
    }
  }

  @Test func aStalledServiceTimesOut() async throws {
    try await rig.run {
      let service = ArctopPredictionService(availability: .stall, clock: rig.clock)
      try await rig.air.host(MuseHeadband())
      let client = ArctopSDKClient(
        link: try rig.air.makeCentral(), clock: rig.clock, service: service, serviceTimeout: .seconds(2))
      let started = rig.clock.now
      let initialise = Task(executorPreference: Task.currentExecutorPreference) {
        await client.initializeArctop(apiKey: "key", bundle: "b")
      }
      await rig.clock.advance(by: .seconds(3))
      let result = await initialise.value
      #expect(throws: ArctopSDKError(.serviceTimeout, "prediction service did not answer within 2.0 seconds")) {
        try result.get()
      }
      #expect(started.duration(to: rig.clock.now) >= .seconds(2))
    }
  }

  @Test func callsOutOfOrderFailWithTheirError() async throws {
    try await rig.run {
      let service = ArctopPredictionService(clock: rig.clock)
      let client = ArctopSDKClient(link: try rig.air.makeCentral(), clock: rig.clock, service: service)
      await #expect(throws: ArctopSDKError.self) { try await client.scanForAvailableDevices() }
      #expect(throws: ArctopSDKError.self) {
        try Result<Bool, any Error>.failure(ArctopSDKError(.notInitialized, "")).get()
      }
      let refused = await client.initializeArctop(apiKey: ArctopPredictionService.refusedKey, bundle: "b")
      #expect((try? refused.get()) == nil)
      #expect(try await client.initializeArctop(apiKey: "key", bundle: "b").get())
      await #expect(throws: ArctopSDKError.self) { try await client.connectSensorDevice(deviceId: "Muse-0000") }
      let early = await client.startPredictionSession(ArctopSDKPredictions.zone)
      #expect(((try? early.get()) ?? false) == false)
      let unknown = await client.startPredictionSession("mood")
      #expect(((try? unknown.get()) ?? false) == false)
      let finish = await client.finishSession()
      #expect(((try? finish.get()) ?? false) == false)
    }
  }

  @Test func aLostLinkIsReportedAsDisconnected() async throws {
    try await rig.run {
      let headband = MuseHeadband()
      let (client, log, _) = try await start(headband)
      try await connect(client)
      await rig.clock.advance(by: .seconds(2))
      await headband.powerOff()
      await rig.clock.advance(by: .seconds(1))
      #expect(log.current.states.map(\.1) == [.connecting, .connected, .disconnected])
    }
  }

  /// Advertises as a Muse and has the Interaxon service, but no characteristics in it.
  struct Impostor: PeripheralModel {
    let profile = try! GATTProfile([
      ServiceDefinition(
        MuseHeadband.service,
        characteristics: [
          CharacteristicDefinition(BluetoothUUID(0x2A19), name: "Battery", properties: [.read], initialValue: [80])
        ])
    ])
    let advertisement = AdvertisementData(localName: "Muse-1A2B", serviceUUIDs: [MuseHeadband.service])
  }

  @Test func aFailedConnectionKeepsWhyItFailed() async throws {
    try await rig.run {
      try await rig.air.host(Impostor())
      let client = ArctopSDKClient(
        link: try rig.air.makeCentral(), clock: rig.clock, service: ArctopPredictionService(clock: rig.clock))
      let log = ArctopListenerLog()
      #expect(try await client.initializeArctop(apiKey: "key", bundle: "com.example.app").get())
      await client.registerListener(log as any ArctopSdkListener)
      try await client.scanForAvailableDevices()
      await rig.clock.advance(by: .milliseconds(200))
      try await client.terminateScanForDevices()
      try await client.connectSensorDevice(deviceId: "Muse-1A2B")
      await rig.clock.advance(by: .milliseconds(200))
      #expect(log.current.states.map(\.1) == [.connecting, .connectionFailed])
      let failure = try #require(await client.connectionFailure as? GATTError)
      #expect(failure.code == .notFound, "\(failure)")
      #expect("\(failure)".contains(MuseHeadband.control.characteristic.uuidString), "\(failure)")
    }
  }
}
