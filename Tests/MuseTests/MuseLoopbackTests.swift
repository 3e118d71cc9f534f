import ArctopSDK
import GATT
import Loopback
import Muse
import Signals
import Testing

/// The emulated headband over the loopback, seen by a bare central.
@Suite(.timeLimit(.minutes(1)))
struct MuseLoopbackTests {
  let rig = MuseRig()

  @Test func answersVersionStatusAndPresetsInJSON() async throws {
    let headband = MuseHeadband(configuration: MuseConfiguration(name: "Muse-7F3C", batteryLevel: 0.8))
    let connection = try await rig.connect(headband)
    let answers = try await rig.answers(connection, to: ["v1", "s", "p50", "p99", "k", "x", "s"])
    #expect(answers.count == 7)
    #expect(answers[0].contains("\"fw\":") && answers[0].hasSuffix("\"rc\":0}"))
    #expect(
      answers[1].contains("\"hn\":\"Muse-7F3C\"") && answers[1].contains("\"bp\":80")
        && answers[1].contains("\"ps\":21"))
    #expect(answers[2] == "{\"rc\":0}")
    #expect(answers[3] == "{\"rc\":1}")
    #expect(answers[4] == "{\"rc\":0}")
    #expect(answers[5] == "{\"rc\":1}")
    #expect(answers[6].contains("\"ps\":50"))
    #expect(await headband.preset == .p50)
  }

  @Test func streamsTwelveSamplePacketsAt256HzCarryingTheSource() async throws {
    let sine = SineSignal(amplitude: 300, frequency: 7)
    let headband = MuseHeadband(channels: [.tp9: sine])
    let connection = try await rig.connect(headband)
    let tp9 = MuseRig.collect(try await connection.notifications(of: MuseHeadband.eeg(.tp9)))
    let aux = MuseRig.collect(try await connection.notifications(of: MuseHeadband.eeg(.aux)))
    let accelerometer = MuseRig.collect(try await connection.notifications(of: MuseHeadband.accelerometer))
    let telemetry = MuseRig.collect(try await connection.notifications(of: MuseHeadband.telemetry))
    try await connection.write(MuseCommand.frame("d"), to: MuseHeadband.control, type: .withResponse)
    #expect(await headband.isStreaming)
    await rig.clock.advance(by: .seconds(3))
    await connection.disconnect()
    let packets = await tp9.value
    // 3 s at 256 Hz is 64 packets of 12.
    #expect(packets.count == 64)
    let decoded = try packets.map(MuseWire.eeg)
    #expect(decoded.map(\.index) == (0..<64).map(UInt16.init))
    let copy = sine
    let expected = (0..<(64 * 12)).map { copy.value(at: Double($0) / 256)! }
    let received = decoded.flatMap(\.microvolts)
    #expect(zip(expected, received).allSatisfy { abs($0 - $1) <= 0.48828125 / 2 + 1e-9 })
    // AUX streams only with a preset that has it (p21 has not).
    #expect(await aux.value.isEmpty)
    // 52 Hz in threes, upright: 1 g along z.
    let imu = try await accelerometer.value.map(MuseWire.acceleration)
    #expect(imu.count == 52)
    #expect(imu.allSatisfy { $0.samples.allSatisfy { abs($0.z - 1) < 0.001 } })
    // Telemetry at once and then each second: at 0, 1, 2 and 3 s.
    #expect(await telemetry.value.count == 4)
  }

  @Test func auxStreamsWithP20AndHaltStops() async throws {
    let headband = MuseHeadband()
    let connection = try await rig.connect(headband)
    let aux = MuseRig.collect(try await connection.notifications(of: MuseHeadband.eeg(.aux)))
    for command in ["p20", "d"] {
      try await connection.write(MuseCommand.frame(command), to: MuseHeadband.control, type: .withoutResponse)
    }
    await rig.clock.advance(by: .seconds(1))
    try await connection.write(MuseCommand.frame("h"), to: MuseHeadband.control, type: .withResponse)
    #expect(await !headband.isStreaming)
    await rig.clock.advance(by: .seconds(1))
    await connection.disconnect()
    #expect(await aux.value.count == 21)
  }

  @Test func badWritesAreRefusedWithTheirATTError() async throws {
    let headband = MuseHeadband()
    let connection = try await rig.connect(headband)
    let cases: [([UInt8], CharacteristicAddress, ATTError)] = [
      ([0x05, 0x64, 0x0A], MuseHeadband.control, .invalidAttributeValueLength),
      ([0x02, 0x64, 0x64], MuseHeadband.control, .valueNotAllowed),
      ([0x03, 0x64, 0xFF, 0x0A], MuseHeadband.control, .valueNotAllowed),
      ([UInt8](repeating: 0x41, count: 21), MuseHeadband.control, .invalidAttributeValueLength),
      (MuseCommand.frame("d"), MuseHeadband.eeg(.tp9), .writeNotPermitted),
    ]
    for (bytes, address, expected) in cases {
      do {
        try await connection.write(bytes, to: address, type: .withResponse)
        Issue.record("\(bytes) was accepted")
      } catch {
        if case .attribute(let refused) = error.code {
          #expect(refused == expected, "\(bytes)")
        } else if address == MuseHeadband.eeg(.tp9) {
          // A characteristic without the write property: refused before it reaches the headband.
          #expect(error.code == .notSupported)
        } else {
          Issue.record("\(bytes): \(error)")
        }
      }
    }
    #expect(await headband.commands.isEmpty)
    #expect(await !headband.isStreaming)
  }

  @Test func offTheHeadTheChannelsRailOrGoFlat() async throws {
    for mode in SyntheticEEG.OffHead.allCases {
      var parameters = SyntheticEEG.Parameters()
      parameters.offHead = mode
      let headband = MuseHeadband(configuration: MuseConfiguration(eeg: parameters))
      let connection = try await rig.connect(headband)
      let af7 = MuseRig.collect(try await connection.notifications(of: MuseHeadband.eeg(.af7)))
      try await connection.write(MuseCommand.frame("d"), to: MuseHeadband.control, type: .withResponse)
      await rig.clock.advance(by: .seconds(1))
      await headband.setOnHead(false)
      await rig.clock.advance(by: .seconds(1))
      await connection.disconnect()
      let samples = try await af7.value.map(MuseWire.eeg).flatMap(\.microvolts)
      #expect(samples.count == 21 * 12 + 21 * 12 || samples.count == 42 * 12)
      let on = samples.prefix(200)
      let off = samples.suffix(200)
      #expect(Set(on).count > 50)
      #expect(off.allSatisfy { $0 == (mode == .rail ? MuseWire.microvolts(4095) : 0) })
      await rig.air.removeAll()
    }
  }

  @Test func anEmptyBatterySwitchesTheHeadbandOffAndDropsTheLink() async throws {
    let headband = MuseHeadband(configuration: MuseConfiguration(batteryLevel: 0.5))
    let connection = try await rig.connect(headband)
    try await connection.write(MuseCommand.frame("d"), to: MuseHeadband.control, type: .withResponse)
    await rig.clock.advance(by: .seconds(1))
    await headband.setBattery(0)
    await rig.clock.advance(by: .seconds(1))
    #expect(await connection.disconnectReason != nil)
    #expect(await !headband.isPoweredOn)
    #expect(await !headband.isStreaming)
    // Off the air until it is charged: a connect times out, then succeeds.
    let central = try rig.air.makeCentral()
    let peripheral = try #require(rig.air.peripherals.first)
    let attempt = Task { try await central.connect(peripheral, timeout: .seconds(1)) }
    await rig.clock.advance(by: .seconds(2))
    await #expect(throws: GATTError.self) { _ = try await attempt.value }
    await headband.setBattery(0.5)
    let again = try await central.connect(peripheral, timeout: .seconds(1))
    #expect(await again.disconnectReason == nil)
    await rig.air.removeAll()
  }

  @Test func ppgOnlyOnAMuse2WithAPPGPreset() async throws {
    let old = MuseHeadband(configuration: MuseConfiguration(variant: .muse2016))
    #expect(old.profile.characteristic(at: MuseHeadband.ppg[1]) == nil)
    // On the loopback's executor, where each instant settles exactly: an
    // exact count of packets in a second (settled by counting quiet turns,
    // the count was off now and then).
    let rig = MuseRig(executor: true)
    try await rig.run {
      let headband = MuseHeadband(configuration: MuseConfiguration(variant: .muse2))
      let connection = try await rig.connect(headband)
      let infrared = MuseRig.collect(try await connection.notifications(of: MuseHeadband.ppg[1]))
      try await connection.write(MuseCommand.frame("d"), to: MuseHeadband.control, type: .withResponse)
      await rig.clock.advance(by: .seconds(1))
      try await connection.write(MuseCommand.frame("h"), to: MuseHeadband.control, type: .withResponse)
      try await connection.write(MuseCommand.frame("p50"), to: MuseHeadband.control, type: .withResponse)
      try await connection.write(MuseCommand.frame("d"), to: MuseHeadband.control, type: .withResponse)
      await rig.clock.advance(by: .seconds(1))
      await connection.disconnect()
      // 64 Hz in sixes: 10 packets in the second with p50, none before.
      #expect(await infrared.value.count == 10)
    }
  }

  @Test func eyesClosedRaiseAlphaAndBlinksShowOnTheForehead() {
    func window(_ channel: MuseChannel, closed: Bool) -> [[Double]] {
      var generator = SyntheticEEG(channel: channel, seed: 3, scheduleSeed: 9)
      let conditions = SyntheticEEG.Conditions(eyesClosed: closed ? 1 : 0)
      let samples = (0..<(256 * 20)).map { _ in generator.next(conditions) }
      return stride(from: 0, to: samples.count, by: 256).map { Array(samples[$0..<($0 + 256)]) }
    }
    let open = window(.tp9, closed: false).map { BandPowers.of([$0]).relativeAlpha }
    let closed = window(.tp9, closed: true).map { BandPowers.of([$0]).relativeAlpha }
    let (meanOpen, meanClosed) = (open.reduce(0, +) / 20, closed.reduce(0, +) / 20)
    #expect(meanClosed > 2 * meanOpen, "alpha share open \(meanOpen), closed \(meanClosed)")
    // 15 blinks a minute: some of 20 one-second windows on AF7 swing by over 80 µV; TP9's do not.
    let frontal = window(.af7, closed: false).filter { ($0.max()! - $0.min()!) > 120 }.count
    let temporal = window(.tp9, closed: false).filter { ($0.max()! - $0.min()!) > 120 }.count
    #expect(frontal >= 2)
    #expect(temporal == 0)
  }
}
