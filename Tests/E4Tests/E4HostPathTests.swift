import E4
import GATT
import GATTTestSupport
import Loopback
import Testing

/// What streaming costs the wristband per packet on a host that sends at
/// once (the loopback's): no `await` per notification. A `notify` put back
/// on the streaming path fails here, not only in `ci/bench-loopback`.
@Suite(.timeLimit(.minutes(1)))
struct E4HostPathTests {
  /// A second of streaming to a counting host on the loopback's executor.
  private func streamASecond(sendingAtOnce: Bool) async throws -> CountingHost {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let clock = VirtualClock(executor: executor)
    let host = CountingHost(clock: clock, sendsAtOnce: sendingAtOnce)
    try await withTaskExecutorPreference(executor) {
      let wristband = E4()
      await wristband.start(host: host)
      await wristband.centralConnected(CountingHost.central)
      try await wristband.write(
        characteristic: E4.command, value: [E4Packet.startCommand, 0, 0, 0, 0], type: .withResponse,
        central: CountingHost.central)
      await clock.advance(by: .seconds(1))
      await wristband.stop()
    }
    return host
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
