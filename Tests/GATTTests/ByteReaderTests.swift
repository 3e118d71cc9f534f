import GATT
import Testing

/// The one reader and writer of packets: little-endian round trips, and a
/// short read that refuses instead of crashing.
struct ByteReaderTests {
  @Test func valuesRoundTripLittleEndian() {
    var writer = ByteWriter()
    writer.append(UInt8(0x01))
    writer.append(UInt16(0x0302))
    writer.append(Int16(-2))
    writer.append(UInt32(0x0706_0504))
    writer.append(2.5)
    #expect(Array(writer.bytes.prefix(5)) == [0x01, 0x02, 0x03, 0xFE, 0xFF])
    var reader = ByteReader(writer.bytes)
    #expect(reader.uint8() == 1)
    #expect(reader.uint16() == 0x0302)
    #expect(reader.int16() == -2)
    #expect(reader.uint32() == 0x0706_0504)
    #expect(reader.float64() == 2.5)
    #expect(reader.remaining == 0)
    #expect(ByteWriter.littleEndian(UInt32(0x0A0B_0C0D)) == [0x0D, 0x0C, 0x0B, 0x0A])
  }

  @Test func aShortReadReturnsNothingAndMovesNothing() {
    var reader = ByteReader([0x01, 0x02, 0x03])
    #expect(reader.uint32() == nil)
    #expect(reader.offset == 0)
    #expect(reader.uint16() == 0x0201)
    #expect(reader.uint16() == nil)
    #expect(reader.uint8() == 3)
    #expect(reader.uint8() == nil)
    #expect(ByteReader.uint32(in: [1, 2], at: 0) == nil)
    #expect(ByteReader.uint16(in: [1, 2, 3], at: 2) == nil)
    #expect(ByteReader([], at: 5).remaining == 0)
  }

  @Test func bigEndian24BitAndBytes() {
    var reader = ByteReader([0x01, 0x02, 0x03, 0xAA, 0xBB])
    #expect(reader.uint24BigEndian() == 0x010203)
    #expect(reader.bytes(3) == nil)
    #expect(reader.bytes(2) == [0xAA, 0xBB])
  }
}

/// The one stopwatch: elapsed time on any clock.
struct StopwatchTests {
  @Test func measuresOnItsClock() async throws {
    let elapsed = Stopwatch(ContinuousClock())
    try await Task.sleep(for: .milliseconds(20))
    #expect(elapsed() >= .milliseconds(20))
    #expect(elapsed.elapsed.seconds >= 0.02)
    #expect(Duration.milliseconds(1500).seconds == 1.5)
  }
}
