import ActiGraphLink
import ActiGraphLinkSDK
import Foundation
import GATT
import Signals
import Testing

/// The SDK's JSON API against the emulated monitor on the loopback, in virtual time.
@Suite(.timeLimit(.minutes(2)))
struct ActiGraphLinkSDKTests {
  static let serial = "TAS1A14758923"

  @Test func scanReportsEachDeviceThenTheList() async throws {
    let rig = try ActiGraphRig()
    try await rig.air.host(ActiGraphLink(configuration: .init(serialNumber: "TAS1A14758923")))
    try await rig.air.host(ActiGraphLink(configuration: .init(serialNumber: "TAS1D03845638")))
    await rig.sdk.enumerateDevices(2)
    let messages = await rig.wait { $0.contains { if case .devices = $0.value { true } else { false } } }
    let found = messages.filter { if case .deviceFound = $0.value { true } else { false } }
    #expect(
      Set(found.map(\.json).compactMap { ActiGraphRig.parsed($0)?["device"] as? String })
        == ["TAS1A14758923", "TAS1D03845638"])
    let list = try #require(messages.last)
    #expect(
      ActiGraphRig.matches(list, #"{"devices": ["TAS1A14758923", "TAS1D03845638"]}"#)
        || ActiGraphRig.matches(list, #"{"devices": ["TAS1D03845638", "TAS1A14758923"]}"#))
    #expect(rig.clock.now.offset >= .seconds(2))
  }

  @Test func aSecondScanDuringAScanIsCode2AndCancelEndsIt() async throws {
    let rig = try ActiGraphRig()
    try await rig.air.host(ActiGraphLink())
    await rig.sdk.enumerateDevices(60)
    await rig.sdk.enumerateDevices(60)
    await rig.clock.advance(by: .seconds(1))
    await rig.sdk.cancelEnumeration()
    let messages = await rig.wait { $0.contains { if case .devices = $0.value { true } else { false } } }
    #expect(messages.contains { ActiGraphRig.errorCode($0) == 2 })
    #expect(
      messages.contains {
        ActiGraphRig.matches(
          $0, #"{"error": {"code": 2, "description": "Device Enumeration in Progress", "extra": ""}}"#)
      })
    #expect(messages.contains { ActiGraphRig.matches($0, #"{"devices": ["TAS1A14758923"]}"#) })
    #expect(rig.clock.now.offset < .seconds(60))
  }

  @Test func connectAndDisconnect() async throws {
    let rig = try ActiGraphRig()
    try await rig.connect(ActiGraphLink())
    #expect((await rig.current()).contains { ActiGraphRig.matches($0, #"{"deviceConnected": "TAS1A14758923"}"#) })
    #expect(await rig.sdk.getConnectedDevice() == Self.serial)
    await rig.sdk.disconnectFromDevice()
    #expect(
      (await rig.current()).last.map { ActiGraphRig.matches($0, #"{"deviceDisconnected": "TAS1A14758923"}"#) } == true)
    #expect(await rig.sdk.getConnectedDevice() == nil)
  }

  @Test func connectingToASerialNoScanFoundIsCode1() async throws {
    let rig = try ActiGraphRig()
    try await rig.air.host(ActiGraphLink())
    await rig.sdk.connectToDevice(Self.serial)
    #expect(
      (await rig.current()).last.map {
        ActiGraphRig.matches(
          $0, #"{"error": {"code": 1, "description": "Device Not Found", "extra": "TAS1A14758923"}}"#)
      } == true)
  }

  @Test func aSecondConnectionIsCode10() async throws {
    let rig = try ActiGraphRig()
    try await rig.connect(ActiGraphLink())
    await rig.sdk.connectToDevice(Self.serial)
    #expect(
      (await rig.current()).last.map {
        ActiGraphRig.matches(
          $0,
          #"{"error": {"code": 10, "description": "Existing Connection Found (Device Already Connected)", "extra": "TAS1A14758923"}}"#
        )
      } == true)
    #expect(await rig.sdk.getConnectedDevice() == Self.serial)
  }

  @Test func withoutAConnectionEveryRequestIsCode0() async throws {
    let rig = try ActiGraphRig()
    await rig.sdk.configureDevice(#"{"raw": {"stream": true}}"#)
    await rig.sdk.getDeviceStatus()
    let codes = (await rig.current()).compactMap(ActiGraphRig.errorCode)
    #expect(codes == [0, 0])
    #expect(
      ActiGraphRig.matches(
        (await rig.current())[0], #"{"error": {"code": 0, "description": "No Device Connected", "extra": ""}}"#))
  }

  @Test func unknownConfigurationKeysAreCode3WithTheKeys() async throws {
    let rig = try ActiGraphRig()
    let model = ActiGraphLink()
    try await rig.connect(model)
    let start = await rig.current().count
    await rig.sdk.configureDevice(#"{"inu": {"accelerometer": true}, "imu": {"mageenetometer": true}}"#)
    let error = try #require((await rig.current(from: start)).first)
    #expect(
      ActiGraphRig.matches(
        error, #"{"error": {"code": 3, "description": "Unrecognized Configuration", "extra": "mageenetometer, inu"}}"#
      )
        || ActiGraphRig.matches(
          error, #"{"error": {"code": 3, "description": "Unrecognized Configuration", "extra": "inu, mageenetometer"}}"#
        ))
    await rig.sdk.configureDevice("not json")
    #expect((await rig.current()).last.flatMap(ActiGraphRig.errorCode) == 3)
    #expect(await model.answers.isEmpty)
  }

  @Test func imuConfigurationHasNoResponseAndSetsTheFlags() async throws {
    let rig = try ActiGraphRig()
    let model = ActiGraphLink()
    try await rig.connect(model)
    let start = await rig.current().count
    await rig.sdk.configureDevice(
      #"{"imu": {"accelerometer": false, "gyroscope": true, "magnetometer": "disable", "temperature": "enable"}}"#)
    await rig.clock.advance(by: .seconds(2))
    #expect((await rig.current(from: start)).isEmpty)
    #expect(await model.imuFlags == LinkMessage.IMUFlag.gyroscope | LinkMessage.IMUFlag.temperature)
  }

  @Test func datesNotInTheFormatAreCode8() async throws {
    let rig = try ActiGraphRig()
    let model = ActiGraphLink()
    try await rig.connect(model)
    await rig.sdk.configureDevice(
      #"{"epoch": {"startDateTime": "2015-07-21 04:05", "stopDateTime": "07-21-2015 04:06:00"}}"#)
    let error = try #require((await rig.current()).last)
    #expect(ActiGraphRig.errorCode(error) == 8)
    #expect(
      (ActiGraphRig.parsed(error.json)?["error"] as? NSDictionary)?["description"] as? String == "Date Format Error")
    // A start after the stop: the device refuses it, also code 8.
    let start = await rig.current().count
    await rig.sdk.configureDevice(
      #"{"epoch": {"startDateTime": "07-21-2015 04:05:00", "stopDateTime": "07-20-2015 04:06:00"}}"#)
    let refused = await rig.wait { $0.count > start }
    #expect(refused.dropFirst(start).first.flatMap(ActiGraphRig.errorCode) == 8)
  }

  @Test func aRangeWithoutEpochsIsCode7() async throws {
    let rig = try ActiGraphRig()
    try await rig.connect(ActiGraphLink())
    let start = await rig.current().count
    await rig.sdk.configureDevice(
      #"{"epoch": {"startDateTime": "01-01-2001 00:00:00", "stopDateTime": "01-01-2001 01:00:00"}}"#)
    let messages = await rig.wait { $0.count > start }
    #expect(messages.dropFirst(start).first.flatMap(ActiGraphRig.errorCode) == 7)
  }

  @Test func aRefusedConfigurationIsCode11() async throws {
    let rig = try ActiGraphRig()
    let model = ActiGraphLink()
    try await rig.connect(model)
    await model.refuseConfigurations(true)
    let start = await rig.current().count
    await rig.sdk.configureDevice(#"{"raw": {"stream": true}}"#)
    let messages = await rig.wait { $0.count > start }
    let error = try #require(messages.dropFirst(start).first)
    #expect(ActiGraphRig.errorCode(error) == 11)
    #expect(
      (ActiGraphRig.parsed(error.json)?["error"] as? NSDictionary)?["description"] as? String
        == "The Last Configuration Request Received Failed")
    #expect(await !model.isStreamingRaw)
  }

  @Test func statusDescribesTheDevice() async throws {
    let rig = try ActiGraphRig()
    let model = ActiGraphLink(configuration: .init(batteryLevel: 0.76, clockTime: 1_437_451_200, logHours: 2))
    try await rig.connect(model)
    let before = rig.clock.now.offset
    await rig.sdk.getDeviceStatus()
    let messages = await rig.wait { $0.contains(where: \.isStatus) }
    let status = try #require(messages.first { $0.isStatus })
    let elapsed = Int((before.components.seconds))
    #expect(
      ActiGraphRig.matches(
        status,
        """
        {"status": {"device": "TAS1A14758923", "battery": 76, "deviceTime": "\(AGDateTime.format(1_437_451_200 + Int64(elapsed)))",
         "epochStartDateTime": "07-21-2015 02:00:00", "epochStopDateTime": "07-21-2015 03:59:00",
         "epochCount": 120, "rawSampleRate": 30, "rawStreaming": false}}
        """), "\(status.json)")
  }

  @Test func rawStreamingAtTheConfiguredRateInG() async throws {
    let rig = try ActiGraphRig()
    let model = ActiGraphLink(
      configuration: .init(rawRate: 50), accelerationX: SineSignal(amplitude: 0.5, frequency: 1),
      accelerationY: ConstantSignal(-0.25), accelerationZ: ConstantSignal(1))
    try await rig.connect(model)
    let start = await rig.current().count
    await rig.sdk.configureDevice(#"{"raw": {"stream": true}}"#)
    await rig.wait { $0.count > start }
    #expect(ActiGraphRig.matches((await rig.current())[start], #"{"raw": {"stream": true}}"#))
    let streamStart = rig.clock.now.offset
    await rig.clock.advance(by: .seconds(10))
    await rig.sdk.configureDevice(#"{"raw": {"stream": false}}"#)
    await rig.wait { $0.contains { ActiGraphRig.matches($0, #"{"raw": {"stream": false}}"#) } }
    var samples: [AGAcceleration] = []
    for message in (await rig.current()) {
      guard case .raw(let device, _, let acceleration, _, let rate) = message.value else { continue }
      #expect(rate == 50)
      #expect(device == Self.serial)
      let json = try #require(ActiGraphRig.parsed(message.json)?["raw"] as? NSDictionary)
      #expect(json["timestamp"] is String)
      #expect((json["acceleration"] as? [NSDictionary])?.count == acceleration.count)
      samples += acceleration
    }
    let seconds = Double((rig.clock.now.offset - streamStart).components.seconds)
    #expect(abs(Double(samples.count) - 50 * seconds) <= 10, "\(samples.count) samples in \(seconds) s")
    #expect(samples.count >= 500)
    #expect(samples.allSatisfy { $0.y == -0.25 && $0.z == 1 })
    #expect(samples.contains { $0.x > 0.49 } && samples.contains { $0.x < -0.49 })
    #expect(await model.rawSamplesSent == samples.count)
  }
}
