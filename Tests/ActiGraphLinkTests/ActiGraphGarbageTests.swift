import ActiGraphLink
import GATT
import Loopback
import Testing

/// Garbage on the command characteristic gets the firmware's own answer —
/// an acknowledgement with "invalid configuration" — at once, and the next
/// request is served as usual. (Over BlueZ an ATT error cannot reach the
/// central on this characteristic: it also takes writes without response,
/// and bluetoothd acknowledges those writes itself.)
@Suite(.timeLimit(.minutes(1)))
struct ActiGraphGarbageTests {
  @Test func aHeaderAnnouncingKilobytesIsAnsweredAtOnce() async throws {
    let clock = VirtualClock(settleLimit: .milliseconds(500))
    let air = LoopbackAir(clock: clock)
    let model = ActiGraphLink()
    try await air.host(model)
    let peripheral = try #require(air.peripherals.first)
    let connection = try await air.makeCentral().connect(peripheral, timeout: .seconds(1))
    let responses = try await connection.notifications(of: ActiGraphLink.response)
    let received = Task {
      var chunks: [[UInt8]] = []
      for try await chunk in responses {
        chunks.append(chunk)
        if chunks.count == 2 { break }
      }
      return chunks
    }
    // '{"n": 999…': type 0x7B announcing 0x6E22 bytes, as the hostile central sends it.
    try await connection.write(Array(#"{"n": 99999"#.utf8), to: ActiGraphLink.command, type: .withResponse)
    try await connection.write([0x01, 0x00, 0x00], to: ActiGraphLink.command, type: .withResponse)
    await clock.advance(by: .seconds(1))
    let chunks = try await received.value
    // acknowledge (0x80), 2 bytes: the type it refused, result 2 (invalid configuration).
    #expect(chunks.first == [0x80, 0x02, 0x00, 0x7B, 0x02])
    // Then the status, for the get-status that followed.
    #expect(chunks.last?.first == 0x81)
    await air.removeAll()
  }
}
