import E4
import E4Link
import Testing

/// The model's encoding against the client's decoding, byte for byte.
@Suite struct E4PacketTests {
  @Test func accelerationSaturatesAtTheInt8RangeAndRoundTrips() throws {
    #expect(E4Packet.accelerationCode(2.5) == 127)
    #expect(E4Packet.accelerationCode(-2.5) == -128)
    #expect(E4Packet.accelerationCode(-2) == -128)
    #expect(E4Packet.accelerationCode(127.0 / 64) == 127)
    #expect(E4Packet.accelerationCode(.nan) == 0)
    let samples: [(x: Int8, y: Int8, z: Int8)] = [
      (127, -128, 0), (1, -1, 64), (0, 0, 0), (5, 6, 7), (-5, -6, -7), (9, 9, 9),
    ]
    let bytes = E4Packet.acceleration(samples, counter: 0xBEEF)
    #expect(bytes.count == 20)
    let decoded = try #require(E4PacketDecoder.acceleration(bytes))
    #expect(decoded.counter == 0xBEEF)
    #expect(decoded.samples.map { [$0.x, $0.y, $0.z] } == samples.map { [$0.x, $0.y, $0.z] })
  }

  @Test func edaIsTheReverseEngineeredLayout() throws {
    // 2 µS is 500 kΩ: 0x07A120, big-endian, then the counter.
    let bytes = E4Packet.eda([500_000, 0, 1, 0xFF_FFFF, 1_000_000, 250_000], counter: 3)
    #expect(Array(bytes.prefix(3)) == [0x07, 0xA1, 0x20])
    #expect(bytes.count == 20)
    #expect(Array(bytes.suffix(2)) == [3, 0])
    let decoded = try #require(E4PacketDecoder.gsr(bytes))
    #expect(decoded.values == [2, 0, 1_000_000, 1_000_000 / Double(0xFF_FFFF), 1, 4])
    #expect(E4Packet.edaCode(2) == 500_000)
    #expect(E4Packet.edaCode(0) == 0)
    #expect(E4Packet.edaCode(0.01) == 0, "too small for 24 bits")
  }

  @Test func temperatureIsTheReverseEngineeredLayout() throws {
    let code = E4Packet.temperatureCode(33)
    #expect(code == 15427)  // (33 + 275.54) / 0.02
    let bytes = E4Packet.temperature([code, 0, 65535, 1], counter: 7)
    #expect(bytes.count == 12)
    #expect(Array(bytes.prefix(2)) == [0x43, 0x3C])
    let decoded = try #require(E4PacketDecoder.temperature(bytes))
    #expect(decoded.counter == 7)
    #expect(abs(decoded.values[0] - 33) < 1e-9)
  }

  @Test func ownLayoutsRoundTrip() throws {
    let bvp = try #require(E4PacketDecoder.bvp(E4Packet.bvp(firstIndex: 70_000, codes: [-32768, 32767, 16, -8])))
    #expect(bvp.firstIndex == 70_000)
    #expect(bvp.values == [-2048, 32767.0 / 16, 1, -0.5])
    #expect(E4Packet.bvpCode(1e9) == .max && E4Packet.bvpCode(-1e9) == .min && E4Packet.bvpCode(.nan) == 0)
    let ibi = try #require(E4PacketDecoder.interbeatInterval(E4Packet.interbeatInterval(beatIndex: 1500, samples: 52)))
    #expect(ibi.beatIndex == 1500 && ibi.interval == 0.8125)
    let battery = try #require(E4PacketDecoder.battery(E4Packet.battery(percent: 42, time: 1_700_000_000.125)))
    #expect(battery.level == 0.42 && battery.timestamp == 1_700_000_000.125)
    #expect(E4PacketDecoder.control(E4Packet.controlEvent(E4Packet.tagEvent, time: 12.5)) == .tag(12.5))
    #expect(E4PacketDecoder.control(E4Packet.controlEvent(E4Packet.powerOffEvent, time: 1)) == .poweringOff(1))
    #expect(
      E4Packet.batteryPercent(0.53) == 53 && E4Packet.batteryPercent(0.001) == 1 && E4Packet.batteryPercent(0) == 0)
  }

  @Test func theStartCommandCarriesSecondsAndMilliseconds() {
    let command = E4Profile.startCommand(unixTime: 1_700_000_000.2509)
    #expect(command == [0x01, 0x00, 0xF1, 0x53, 0x65, 250, 0])
    #expect(E4Profile.time(ofStartCommand: command) == 1_700_000_000.25)
    #expect(E4Profile.time(ofStartCommand: Array(command.prefix(5))) == 1_700_000_000)
  }

  @Test func malformedPacketsDoNotDecode() {
    #expect(E4PacketDecoder.acceleration([1, 2, 3]) == nil)
    #expect(E4PacketDecoder.gsr(Array(repeating: 0, count: 21)) == nil)
    #expect(E4PacketDecoder.temperature([1, 2, 3]) == nil)
    #expect(E4PacketDecoder.bvp([1, 2, 3, 4, 5]) == nil)
    #expect(E4PacketDecoder.interbeatInterval([1]) == nil)
    #expect(E4PacketDecoder.battery([101, 0, 0, 0, 0, 0, 0, 0, 0]) == nil)
    #expect(E4PacketDecoder.control([9, 0, 0, 0, 0, 0, 0, 0, 0]) == nil)
  }
}
