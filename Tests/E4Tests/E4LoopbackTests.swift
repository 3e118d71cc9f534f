import E4
import E4Link
import GATT
import Signals
import Synchronization
import Testing

/// The emulated E4 and the SDK-shaped client over the loopback, in virtual time.
@Suite(.timeLimit(.minutes(2)))
struct E4LoopbackTests {
  let rig = E4Rig()

  /// What the client must decode for a value the model sampled.
  static func bvp(_ value: Double) -> Double { Double(E4Packet.bvpCode(value)) / 16 }
  static func eda(_ value: Double) -> Double {
    let code = E4Packet.edaCode(value)
    return code == 0 ? 0 : 1_000_000 / Double(code)
  }
  static func temperature(_ value: Double) -> Double { Double(E4Packet.temperatureCode(value)) * 0.02 - 275.54 }

  @Test func everyStreamArrivesAtItsRateWithTheValuesSent() async throws {
    let logs = (
      bvp: SampleLog(), eda: SampleLog(), temperature: SampleLog(), x: SampleLog(), y: SampleLog(), z: SampleLog()
    )
    let model = E4(
      bvp: logs.bvp.recording(SyntheticPPG(heartRate: 66, amplitude: 80, noise: 2, seed: 5)),
      eda: logs.eda.recording(
        SyntheticEDA(tonicLevel: 1.5, responses: [SkinConductanceResponse(onset: 8, amplitude: 0.6)], seed: 5)),
      temperature: logs.temperature.recording(TemperatureDrift(start: 32.5, noise: 0.05, seed: 5)),
      // ±2.5 g and a ramp through ±2.2 g: both ends of the int8 range, saturated.
      accelerationX: logs.x.recording(SineSignal(amplitude: 2.5, frequency: 0.5)),
      accelerationY: logs.y.recording(RampSignal(from: -2.2, to: 2.2, duration: 25)),
      accelerationZ: logs.z.recording(ConstantSignal(1)))
    let manager = try await rig.host(model)
    let bvp = E4Rig.collect(await manager.bvp())
    let gsr = E4Rig.collect(await manager.gsr())
    let temperature = E4Rig.collect(await manager.temperature())
    let acceleration = E4Rig.collect(await manager.acceleration())
    let clock = rig.clock
    let arrivals = Task {
      var times: [Duration] = []
      for await _ in await manager.bvp() { times.append(clock.now.offset) }
      return times
    }
    try await manager.connect()
    #expect(await manager.status == .connected)
    #expect(await model.isStreaming)
    let t0 = try #require(await manager.sessionStart)
    #expect(abs(t0 - E4Rig.epoch) < 0.001)
    await rig.clock.advance(by: .seconds(30))
    await manager.disconnect()
    let (b, g, t, a) = (await bvp.value, await gsr.value, await temperature.value, await acceleration.value)

    // Rates: 30 s gives exactly the samples of the packets filled by then.
    #expect(b.count == 64 * 30)
    #expect(a.count == 32 * 30)
    #expect(g.count == 4 * 30)
    #expect(t.count == 4 * 30)
    // Device-side timestamps: sample n at t0 + n / rate.
    #expect(b.enumerated().allSatisfy { $1.timestamp == t0 + Double($0) / 64 })
    #expect(a.enumerated().allSatisfy { $1.timestamp == t0 + Double($0) / 32 })
    #expect(g.enumerated().allSatisfy { $1.timestamp == t0 + Double($0) / 4 })
    #expect(t.enumerated().allSatisfy { $1.timestamp == t0 + Double($0) / 4 })
    // Values: exactly what the model sampled, as the wire carries it.
    #expect(b.map(\.value) == logs.bvp.values.prefix(b.count).map(Self.bvp))
    #expect(g.map(\.value) == logs.eda.values.prefix(g.count).map(Self.eda))
    #expect(t.map(\.value) == logs.temperature.values.prefix(t.count).map(Self.temperature))
    #expect(a.map(\.x) == logs.x.values.prefix(a.count).map(E4Packet.accelerationCode))
    #expect(a.map(\.y) == logs.y.values.prefix(a.count).map(E4Packet.accelerationCode))
    #expect(a.map(\.z) == logs.z.values.prefix(a.count).map(E4Packet.accelerationCode))
    #expect(a.allSatisfy { $0.z == 64 })
    #expect(a.contains { $0.x == 127 } && a.contains { $0.x == -128 })
    #expect(a.contains { $0.y == 127 } && a.contains { $0.y == -128 })
    // And close to the sources (the wire's resolution).
    #expect(zip(b.map(\.value), logs.bvp.values).allSatisfy { abs($0 - $1) <= 1.0 / 32 })
    #expect(zip(t.map(\.value), logs.temperature.values).allSatisfy { abs($0 - $1) <= 0.0101 })
    #expect(zip(g.map(\.value), logs.eda.values).allSatisfy { abs($0 - $1) <= 0.001 })
    // The model sampled at the stream's own times.
    #expect(logs.bvp.times.prefix(64) == (0..<64).map { Double($0) / 64 }[...])
    // At the rate in virtual time: no sample arrives before it is due.
    let arrived = await arrivals.value
    #expect(arrived.count == b.count)
    for (n, time) in arrived.enumerated() where time < .nanoseconds(Int64(n) * 15_625_000) {
      Issue.record("BVP sample \(n) arrived at \(time), before it was due")
      break
    }
    #expect(await manager.malformedPackets == 0)
    await rig.air.removeAll()
  }

  @Test func interbeatIntervalsMatchTheBeatsInTheBVPSent() async throws {
    let ppg = SyntheticPPG(heartRate: 72, variability: 0.06, amplitude: 60, noise: 0.5, seed: 3)
    let manager = try await rig.host(E4(bvp: ppg))
    let bvp = E4Rig.collect(await manager.bvp())
    let ibi = E4Rig.collect(await manager.ibi())
    try await manager.connect()
    await rig.clock.advance(by: .seconds(60))
    await manager.disconnect()
    let (samples, intervals) = (await bvp.value, await ibi.value)
    let t0 = try #require(await manager.sessionStart)
    #expect(samples.count == 64 * 60)
    // None before the warm-up, then one per beat.
    #expect(intervals.allSatisfy { $0.timestamp >= t0 + 20 })
    let pulses = ppg.peakTimes(until: 61)
    // Beats detected by 60 s: a peak is confirmed 20 samples after it.
    let beats = pulses.filter { $0 > 20.05 && $0 < 60 - 20.0 / 64 }
    #expect(abs(intervals.count - beats.count) <= 1, "\(intervals.count) IBIs for \(beats.count) beats")
    let values = samples.map(\.value)
    var previousBeat: Int?
    for interval in intervals {
      let index = Int(((interval.timestamp - t0) * 64).rounded())
      // The beat is the highest BVP sample around it, in the data the client received …
      let window = max(0, index - 19)...min(values.count - 1, index + 19)
      #expect(window.allSatisfy { values[$0] <= values[index] }, "no BVP peak at beat \(index)")
      // … the interval reaches back to the previous such peak …
      let previous = index - Int((interval.value * 64).rounded())
      let before = max(0, previous - 19)...(previous + 19)
      #expect(before.allSatisfy { values[$0] <= values[previous] }, "no BVP peak at \(previous)")
      if let previousBeat, previousBeat > index - 100 { #expect(previous == previousBeat) }
      previousBeat = index
      // … and both are the synthetic pulse's beats, to a sample.
      let time = Double(index) / 64
      #expect(
        pulses.contains { abs($0 - time) <= 1.0 / 64 + 1e-9 },
        "beat at \(time) s is not a pulse: nearest \(pulses.min { abs($0 - time) < abs($1 - time) }!)")
    }
    let rates = intervals.map { 60 / $0.value }
    #expect(abs(rates.reduce(0, +) / Double(rates.count) - 72) < 3)
    await rig.air.removeAll()
  }

  @Test func beatsDuringMotionAreFilteredOut() async throws {
    let model = E4(bvp: SyntheticPPG(heartRate: 80, seed: 8))
    let manager = try await rig.host(model)
    let ibi = E4Rig.collect(await manager.ibi())
    try await manager.connect()
    await rig.clock.advance(by: .seconds(30))
    // The arm swings from 30 s to 45 s.
    await model.setAcceleration(
      x: SineSignal(amplitude: 0.6, frequency: 1.5), y: ConstantSignal(0.2),
      z: SineSignal(amplitude: 0.3, frequency: 1, offset: 0.9))
    await rig.clock.advance(by: .seconds(15))
    await model.setAcceleration(x: ConstantSignal(0), y: ConstantSignal(0), z: ConstantSignal(1))
    await rig.clock.advance(by: .seconds(15))
    await manager.disconnect()
    let t0 = try #require(await manager.sessionStart)
    let times = await ibi.value.map { $0.timestamp - t0 }
    #expect(times.contains { $0 > 20 && $0 < 30 }, "beats before the motion")
    #expect(times.contains { $0 > 47 }, "beats after the motion")
    #expect(!times.contains { $0 > 30.5 && $0 < 45 }, "no beat while the arm swings: \(times)")
    await rig.air.removeAll()
  }

  @Test func refusedAuthenticationBlocksDiscovery() async throws {
    try await rig.air.host(E4())
    let refused = try rig.api(E4LocalVerifier(validKeys: ["good-key"], refusal: "unknown key"))
    let result = await refused.authenticate(apiKey: "bad-key")
    #expect(!result.success)
    #expect(result.description == "unknown key")
    do {
      _ = try await refused.discoverDevices()
      Issue.record("discovery went ahead without authentication")
    } catch {
      #expect(error.code == .notAuthenticated)
    }
    #expect(await !refused.authenticate(apiKey: "").success)
    #expect(await refused.authenticate(apiKey: "good-key").success)
    let manager = try await rig.firstDevice(refused, apiKey: "good-key")
    #expect(manager.name == "Empatica E4")
    let nobody = try rig.api(E4LocalVerifier.refusingEveryKey())
    #expect(await !nobody.authenticate(apiKey: "good-key").success)
    await rig.air.removeAll()
  }

  @Test func discoveryReportsStatusAndTheDevicesFound() async throws {
    try await rig.air.host(E4(configuration: E4Configuration(serialNumber: "A01")))
    try await rig.air.host(E4(configuration: E4Configuration(serialNumber: "A02")))
    try await rig.air.host(Thermometer())  // not a wristband: not reported
    let api = try rig.api()
    await api.authenticate(apiKey: "key")
    let events = E4Rig.collect(try await api.discoverDevices(duration: .seconds(3)))
    await rig.clock.advance(by: .seconds(3))
    let seen = await events.value
    var statuses: [BLEStatus] = []
    var lists: [[E4DeviceManager]] = []
    for event in seen {
      switch event {
      case .bleStatus(let status): statuses.append(status)
      case .devices(let devices): lists.append(devices)
      case .found: break
      }
    }
    #expect(statuses == [.scanning, .ready])
    // didDiscoverDevices: once, after the scan, with both wristbands.
    #expect(lists.count == 1)
    #expect(Set(lists.first?.compactMap(\.name) ?? []) == ["Empatica E4"])
    #expect(lists.first?.count == 2)
    #expect(await api.bleStatus == .ready)
    await api.setBluetoothAvailable(false)
    let off = await E4Rig.collect(try api.discoverDevices()).value
    #expect(off.count == 1)
    if case .bleStatus(.notAvailable) = off.first {} else { Issue.record("expected notAvailable, got \(off)") }
    await rig.air.removeAll()
  }

  @Test func tagsArriveWithTheDeviceTime() async throws {
    let model = E4()
    let manager = try await rig.host(model)
    let tags = E4Rig.collect(await manager.tags())
    try await manager.connect()
    await rig.clock.advance(by: .seconds(5))
    let first = try #require(await model.pressButton())
    await rig.clock.advance(by: .milliseconds(2500))
    let second = try #require(await model.pressButton())
    await rig.clock.advance(by: .milliseconds(100))
    await manager.disconnect()
    let t0 = try #require(await manager.sessionStart)
    let received = await tags.value.map(\.timestamp)
    #expect(received == [first, second])
    #expect(abs(first - (t0 + 5)) < 0.001)
    #expect(abs(second - first - 2.5) < 1e-6)
    #expect(await model.tags == [first, second])
    await rig.air.removeAll()
  }

  @Test func batteryDrainsIsNotifiedAndSwitchesTheDeviceOffWhenEmpty() async throws {
    let configuration = E4Configuration(
      batteryLevel: 0.5, batteryDrain: .init(streamingPerHour: 3.6, connectedPerHour: 0, idlePerHour: 0))
    let model = E4(configuration: configuration)
    let manager = try await rig.host(model)
    let battery = E4Rig.collect(await manager.batteryLevels())
    try await manager.connect()
    await rig.clock.advance(by: .seconds(35))
    #expect(abs(await model.batteryLevel - 0.465) < 1e-6)
    await model.setBattery(0.8)
    await rig.clock.advance(by: .milliseconds(10))
    await model.setBattery(0)
    await rig.clock.advance(by: .milliseconds(10))
    #expect(await !model.isPoweredOn)
    #expect(await manager.status == .disconnected)
    // An empty wristband is off the air: a connect times out.
    let attempt = Task { try await manager.connect(timeout: .seconds(1)) }
    await rig.clock.advance(by: .seconds(2))
    await #expect(throws: E4LinkError.self) { try await attempt.value }
    await manager.disconnect()
    let levels = await battery.value
    let t0 = try #require(await manager.sessionStart)
    // Told on connecting and at each change only: the wristband's first
    // notification repeats the level read and is not told again.
    #expect(levels.map(\.value).prefix(4) == [0.5, 0.49, 0.48, 0.47])
    #expect(levels.map(\.value).suffix(1) == [0.8])
    #expect(zip(levels, levels.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp && $0.value != $1.value })
    #expect(levels.count >= 3 && abs(levels[2].timestamp - (t0 + 20)) < 0.01, "1 % per 10 s")
    await rig.air.removeAll()
  }

  /// A real E4 stops advertising when it switches off; one that kept
  /// advertising was found and connected to again at once over BlueZ, then dropped.
  @Test func anEmptyWristbandIsOffTheAirUntilItIsCharged() async throws {
    let model = E4(configuration: E4Configuration(batteryLevel: 0))
    try await rig.air.host(model)
    let central = try rig.air.makeCentral()
    let peripheral = try #require(rig.air.peripherals.first)
    let first = Task { try await central.connect(peripheral, timeout: .seconds(1)) }
    await rig.clock.advance(by: .seconds(2))
    await #expect(throws: GATTError.self) { _ = try await first.value }
    await model.setBattery(0.5)
    let connection = try await central.connect(peripheral, timeout: .seconds(1))
    await rig.clock.advance(by: .milliseconds(10))
    #expect(await model.connectedCentrals.count == 1)
    await model.setBattery(0)
    await rig.clock.advance(by: .milliseconds(10))
    #expect(await connection.disconnectReason != nil)
    let second = Task { try await central.connect(peripheral, timeout: .seconds(1)) }
    await rig.clock.advance(by: .seconds(2))
    await #expect(throws: GATTError.self) { _ = try await second.value }
    await rig.air.removeAll()
  }

  @Test func streamingStartsAndStopsOnTheClientsCommand() async throws {
    let model = E4()
    try await rig.air.host(model)
    let central = try rig.air.makeCentral()
    let peripheral = try #require(rig.air.peripherals.first)
    let connection = try await central.connect(peripheral, timeout: .seconds(1))
    let values = try await connection.notifications(of: E4.bvp)
    let packets = Task {
      var firstIndices: [Int] = []
      do {
        for try await bytes in values { firstIndices.append(E4PacketDecoder.bvp(bytes)!.firstIndex) }
      } catch {}
      return firstIndices
    }
    // Subscribed, but no start command: nothing.
    await rig.clock.advance(by: .seconds(2))
    #expect(await !model.isStreaming)
    try await connection.write(E4Profile.startCommand(unixTime: 1_700_000_000.25), to: E4.command, type: .withResponse)
    #expect(await model.sessionStartTime == 1_700_000_000.25)
    #expect(abs(await model.clockTime - 1_700_000_000.25) < 1e-9)
    await rig.clock.advance(by: .seconds(1))
    try await connection.write(E4Profile.stopCommand, to: E4.command, type: .withoutResponse)
    await rig.clock.advance(by: .seconds(1))
    #expect(await !model.isStreaming)
    // The real device's five-byte form starts a new session, counting from zero again.
    try await connection.write([0x01, 0x00, 0xF1, 0x53, 0x65], to: E4.command, type: .withResponse)
    #expect(await model.sessionStartTime == 1_700_000_000)
    await rig.clock.advance(by: .milliseconds(250))
    // Bad commands are refused as ATT errors, and nothing breaks.
    let refusals: [([UInt8], ATTError)] = [
      ([], .invalidAttributeValueLength), ([0x09], E4.unknownCommand), ([0x01, 1, 2], .invalidAttributeValueLength),
      ([0x02, 0], .invalidAttributeValueLength), ([0x01, 0, 0, 0, 0, 0xE8, 0x03], .valueNotAllowed),
    ]
    for (command, expected) in refusals {
      do {
        try await connection.write(command, to: E4.command, type: .withResponse)
        Issue.record("\(command) was accepted")
      } catch {
        #expect(error.attributeError == expected, "\(command)")
      }
    }
    #expect(await model.isStreaming)
    await connection.disconnect()
    #expect(await !model.isStreaming)
    let indices = await packets.value
    // 1 s = 8 packets, then 0.25 s = 2 packets of the new session.
    #expect(indices == [0, 8, 16, 24, 32, 40, 48, 56, 0, 8])
    await rig.air.removeAll()
  }

  @Test func timestampsIncreaseAcrossAReconnect() async throws {
    let manager = try await rig.host(E4())
    let bvp = E4Rig.collect(await manager.bvp())
    let gsr = E4Rig.collect(await manager.gsr())
    try await manager.connect()
    await rig.clock.advance(by: .seconds(5))
    let peripheral = try #require(rig.air.peripherals.first)
    await rig.air.loseLinks(to: peripheral)
    await rig.clock.advance(by: .milliseconds(500))
    #expect(await manager.status == .disconnected)
    try await manager.connect()
    await rig.clock.advance(by: .seconds(5))
    await manager.disconnect()
    for stream in [await bvp.value, await gsr.value] {
      #expect(zip(stream, stream.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp })
    }
    let samples = await bvp.value
    #expect(samples.count == 64 * 10)
    #expect(await manager.malformedPackets == 0)
    await rig.air.removeAll()
  }
}

/// A peripheral that is not a wristband.
private struct Thermometer: PeripheralModel {
  let profile = try! GATTProfile([])
  let advertisement = AdvertisementData(localName: "Thermometer")
}

@Suite(.timeLimit(.minutes(2)))
struct E4DeviceDelegateTests {
  let rig = E4Rig()

  @Test func theDelegateIsToldWhatTheStreamsCarryInTheSameOrder() async throws {
    let model = E4(
      bvp: SyntheticPPG(heartRate: 70, amplitude: 80, noise: 2, seed: 9),
      accelerationX: SineSignal(amplitude: 1, frequency: 1))
    let manager = try await rig.host(model)
    let delegate = RecordingE4Delegate()
    let bvp = E4Rig.collect(await manager.bvp())
    let acceleration = E4Rig.collect(await manager.acceleration())
    await manager.connect(with: delegate)
    #expect(await manager.status == .connected)
    await rig.clock.advance(by: .seconds(10))
    await manager.disconnect()
    let (streamedBVP, streamedAcceleration) = (await bvp.value, await acceleration.value)
    #expect(streamedBVP.count == 64 * 10)
    // The delegate's values are the SDK's Float; the streams' Double.
    #expect(delegate.bvp == streamedBVP.map { E4Sample(value: Double(Float($0.value)), timestamp: $0.timestamp) })
    #expect(delegate.acceleration == streamedAcceleration)
    #expect(delegate.deviceStatuses == [.connecting, .connected, .disconnecting, .disconnected])
  }
}
