import ArctopSDK
import Muse
import Testing

/// The headband's packet layouts against the client's decoder.
struct MusePacketTests {
  @Test func everyTwelveBitCodeRoundTripsThroughTheClientsDecoder() throws {
    for start in stride(from: 0, to: 4096, by: 12) {
      let codes = (start..<(start + 12)).map { UInt16($0 % 4096) }
      let packet = MusePacket.eeg(index: UInt16(start), codes: codes)
      #expect(packet.count == 20)
      let (index, microvolts) = try MuseWire.eeg(packet)
      #expect(index == UInt16(start))
      #expect(microvolts == codes.map { 0.48828125 * (Double($0) - 2048) })
    }
  }

  @Test func microvoltsComeBackWithinHalfAStep() throws {
    let values = (0..<12).map { -900 + 163.7 * Double($0) }
    let (_, decoded) = try MuseWire.eeg(MusePacket.eeg(index: 0xFFFF, codes: values.map(MusePacket.eegCode)))
    for (sent, received) in zip(values, decoded) { #expect(abs(sent - received) <= 0.48828125 / 2 + 1e-9) }
    // Beyond the range, the code holds at the rails.
    #expect(MusePacket.eegCode(5000) == 4095)
    #expect(MusePacket.eegCode(-5000) == 0)
    #expect(MusePacket.eegCode(.nan) == 0)
  }

  /// The code rounds as `rounded()` does (halves away from zero), which it
  /// no longer calls: exact halves of a step, their neighbours, and values
  /// spread over and beyond the range.
  @Test func codesRoundAsTheStandardLibraryDoes() {
    let step = MusePacket.microvoltsPerCode
    var values = stride(from: -1100.0, through: 1100, by: 0.0371).map { $0 }
    for half in stride(from: -2100.5, through: 2100.5, by: 1) {
      values += [half * step, (half * step).nextUp, (half * step).nextDown]
    }
    values += [0, -0.0, 1e300, -1e300, .infinity, -.infinity, 0x1p52 * step, -0x1p53 * step]
    // Just under a half a step, where adding a half rounds up to a whole one.
    let underHalf = (0.5 as Double).nextDown
    values += [underHalf * step, -underHalf * step, 0.5 * step, -0.5 * step]
    // Not a number reads as the low rail.
    #expect(MusePacket.eegCode(.nan) == 0)
    for value in values {
      let expected = UInt16(min(4095, max(0, (value / step).rounded() + 2048)))
      #expect(MusePacket.eegCode(value) == expected, "\(value) µV")
    }
  }

  @Test func knownPackingByHand() {
    // 0xABC, 0x123 → AB C1 23.
    let packet = MusePacket.eeg(index: 0x0102, codes: [0xABC, 0x123] + [UInt16](repeating: 0, count: 10))
    #expect(Array(packet.prefix(5)) == [0x01, 0x02, 0xAB, 0xC1, 0x23])
  }

  /// A packet written over an earlier one is the packet made afresh; the
  /// earlier one's storage is reused when nothing else holds it, and left as
  /// it was when something does.
  @Test func anEEGPacketWrittenInPlace() {
    let first = (0..<12).map { UInt16($0 * 300) }
    let second = (0..<12).map { UInt16(4095 - $0 * 7) }
    var packet: [UInt8] = []
    MusePacket.eeg(index: 1, codes: first, into: &packet)
    #expect(packet == MusePacket.eeg(index: 1, codes: first))
    let storage = packet.withUnsafeBufferPointer { $0.baseAddress }
    MusePacket.eeg(index: 2, codes: second, into: &packet)
    #expect(packet == MusePacket.eeg(index: 2, codes: second))
    #expect(packet.withUnsafeBufferPointer { $0.baseAddress } == storage)
    let held = packet
    MusePacket.eeg(index: 3, codes: first, into: &packet)
    #expect(held == MusePacket.eeg(index: 2, codes: second))
    #expect(packet == MusePacket.eeg(index: 3, codes: first))
    // Any other length is replaced by a packet's.
    var short: [UInt8] = [1, 2, 3]
    MusePacket.eeg(index: 4, codes: second, into: &short)
    #expect(short == MusePacket.eeg(index: 4, codes: second))
  }

  /// The client decodes each channel's packets into one array: the same
  /// samples as a new array, its storage reused when nothing holds it, and
  /// left as it was by a packet that cannot be read.
  @Test func anEEGPacketDecodedInPlace() throws {
    let first = MusePacket.eeg(index: 7, codes: (0..<12).map { UInt16($0 * 341) })
    let second = MusePacket.eeg(index: 8, codes: (0..<12).map { UInt16(4095 - $0 * 5) })
    var samples: [Double] = []
    #expect(try MuseWire.eeg(first, into: &samples) == 7)
    #expect(samples == (try MuseWire.eeg(first).microvolts))
    let storage = samples.withUnsafeBufferPointer { $0.baseAddress }
    let held = samples
    #expect(try MuseWire.eeg(second, into: &samples) == 8)
    #expect(samples == (try MuseWire.eeg(second).microvolts))
    #expect(held == (try MuseWire.eeg(first).microvolts))
    let reused = samples.withUnsafeBufferPointer { $0.baseAddress }
    #expect(reused != storage)
    #expect(try MuseWire.eeg(first, into: &samples) == 7)
    #expect(samples.withUnsafeBufferPointer { $0.baseAddress } == reused)
    #expect(throws: MuseWire.MalformedPacket.self) { try MuseWire.eeg([1, 2, 3], into: &samples) }
    #expect(samples == (try MuseWire.eeg(first).microvolts))
  }

  @Test func anIMUPacketWrittenInPlace() throws {
    let samples: [(x: Int16, y: Int16, z: Int16)] = [(1, -2, 3), (.max, .min, 0), (-1, 256, 4096)]
    var packet: [UInt8] = [9]
    MusePacket.imu(index: 0x0304, samples: samples, into: &packet)
    #expect(packet == MusePacket.imu(index: 0x0304, samples: samples))
    #expect(Array(packet.prefix(6)) == [0x03, 0x04, 0x00, 0x01, 0xFF, 0xFE])
    let storage = packet.withUnsafeBufferPointer { $0.baseAddress }
    let held = packet
    MusePacket.imu(index: 5, samples: samples.reversed(), into: &packet)
    #expect(held == MusePacket.imu(index: 0x0304, samples: samples))
    #expect(packet.withUnsafeBufferPointer { $0.baseAddress } != storage)
    let (index, decoded) = try MuseWire.acceleration(packet)
    #expect(index == 5 && decoded[0].z == 0.0000610352 * 4096)
  }

  @Test func ppgPacketsAreSixBigEndianCodesOf24Bits() {
    let packet = MusePacket.ppg(index: 0x0A0B, codes: [0, 1, 0x12_3456, 0xFF_FFFF, 0x100_0000, .max])
    #expect(packet.count == 20)
    #expect(Array(packet.prefix(2)) == [0x0A, 0x0B])
    // Codes above 24 bits are held at the largest.
    #expect(
      Array(packet.dropFirst(2))
        == [0, 0, 0, 0, 0, 1, 0x12, 0x34, 0x56, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
  }

  @Test func accelerationTelemetryAndControlRoundTrip() throws {
    let codes = [(0.0, 0.5, 1.0), (-1.0, 0.25, 0.999), (2.0, -2.0, 0.0)].map {
      (MusePacket.accelerationCode($0.0), MusePacket.accelerationCode($0.1), MusePacket.accelerationCode($0.2))
    }
    let (index, samples) = try MuseWire.acceleration(MusePacket.imu(index: 7, samples: codes))
    #expect(index == 7)
    #expect(abs(samples[1].x + 1) < 0.0001 && abs(samples[0].z - 1) < 0.0001 && abs(samples[2].y + 2) < 0.0001)
    let telemetry = MusePacket.telemetry(index: 1, batteryPercent: 82.5, fuelGaugeMillivolts: 4000, temperature: 96)
    #expect(telemetry.count == 20)
    #expect(try MuseWire.batteryPercent(telemetry) == 82.5)
    let json = "{\"hn\":\"Muse-1A2B\",\"sn\":\"1A2B-3C4D-5E6F\",\"bp\":82,\"rc\":0}"
    let packets = MusePacket.controlAnswer(json)
    #expect(packets.allSatisfy { $0.count == 20 && $0[0] <= 19 })
    #expect(try packets.map(MuseWire.controlText).joined() == json)
  }

  @Test func malformedNotificationsAreReportedNotDecoded() throws {
    #expect(throws: MuseWire.MalformedPacket.self) { try MuseWire.eeg([0, 1, 2]) }
    #expect(throws: MuseWire.MalformedPacket.self) { try MuseWire.acceleration([UInt8](repeating: 0, count: 21)) }
    var handed = 0
    #expect(throws: MuseWire.MalformedPacket.self) {
      try MuseWire.acceleration([UInt8](repeating: 0, count: 19)) { _ in handed += 1 }
    }
    #expect(handed == 0)
    #expect(throws: MuseWire.MalformedPacket.self) { try MuseWire.controlText([5, 0x41]) }
    #expect(throws: MuseWire.MalformedPacket.self) { try MuseWire.controlText([]) }
    // A count of zero is an empty fragment (the fuzzer found it trapped).
    #expect(try MuseWire.controlText([0]) == "")
  }

  @Test func commandFraming() throws {
    #expect(try MuseCommand(frame: MuseWire.command("v1")) == .version)
    #expect(try MuseCommand(frame: [0x02, 0x64, 0x0A]) == .resume)
    #expect(try MuseCommand(frame: MuseCommand.frame("p50")) == .preset("p50"))
    #expect(try MuseCommand(frame: MuseCommand.frame("*1")) == .reset)
    #expect(try MuseCommand(frame: MuseCommand.frame("zz")) == .unknown("zz"))
    let refused: [([UInt8], MuseCommand.FrameError)] = [
      ([], .empty),
      ([0x05, 0x64, 0x0A], .lengthMismatch(declared: 5, actual: 2)),
      ([0x00], .lengthMismatch(declared: 0, actual: 0)),
      ([0x02, 0x64, 0x64], .missingNewline),
      ([0x03, 0x64, 0x07, 0x0A], .notASCII(byte: 0x07, at: 2)),
    ]
    for (bytes, error) in refused {
      #expect(throws: error) { try MuseCommand(frame: bytes) }
    }
    #expect(MusePreset.named("p21") == .p21)
    #expect(MusePreset.named("p99") == nil)
  }
}
