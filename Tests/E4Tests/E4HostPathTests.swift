import E4
import GATT
import GATTTestSupport
import Testing

/// What streaming costs the wristband per packet on a host that sends at
/// once (the loopback's): no `await` per notification. A `notify` put back
/// on the streaming path fails here, not only in `ci/bench-loopback`.
@Suite(.timeLimit(.minutes(1)))
struct E4HostPathTests {
  /// A second of streaming to a counting host.
  private func streamASecond(sendingAtOnce: Bool) async throws -> CountingHost {
    try await CountingHost.stream(E4(), sendingAtOnce: sendingAtOnce, for: .seconds(1)) { wristband in
      try await wristband.write(
        characteristic: E4.command, value: [E4Packet.startCommand, 0, 0, 0, 0], type: .withResponse,
        central: CountingHost.central)
    }
  }

  @Test func aHostThatSendsAtOnceIsNotAwaitedForTheStream() async throws {
    let atOnce = try await streamASecond(sendingAtOnce: true)
    let awaited = try await streamASecond(sendingAtOnce: false)
    // The same notifications either way; with the first host only the
    // battery's (one a second at most, outside the stream) are awaited.
    #expect(atOnce.atOnce >= 10)  // a second's BVP, EDA, temperature and acceleration packets: 14
    #expect(atOnce.awaited <= 2)
    #expect(atOnce.atOnce + atOnce.awaited == awaited.awaited)
    #expect(awaited.atOnce == 0)
  }
}
