import BlendMicro
import GATT
import GATTTestSupport
import Loopback
import Testing

/// What streaming costs the board per sample on a host that sends at once
/// (the loopback's): no `await` per notification, so no switches of
/// executor around each. A `notify` put back on that path fails here, not
/// only in `ci/bench-loopback`.
@Suite(.timeLimit(.minutes(1)))
struct BlendMicroHostPathTests {
  /// Just under a second of ECG, samples 0 to 99, to a counting host on
  /// the loopback's executor.
  private func streamASecond(sendingAtOnce: Bool) async -> CountingHost {
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    let clock = VirtualClock(executor: executor)
    let host = CountingHost(clock: clock, sendsAtOnce: sendingAtOnce)
    await withTaskExecutorPreference(executor) {
      let board = BlendMicro()
      await board.start(host: host)
      await board.centralConnected(CountingHost.central)
      await board.subscriptionChanged(characteristic: BlendMicro.tx, central: CountingHost.central, subscribed: true)
      await clock.advance(by: .milliseconds(995))
      await board.stop()
    }
    return host
  }

  @Test func aHostThatSendsAtOnceIsNeverAwaitedPerSample() async {
    let host = await streamASecond(sendingAtOnce: true)
    #expect(host.atOnce == 100)
    #expect(host.awaited == 0)
  }

  /// Over BlueZ, when the characteristic's socket is not in use or full,
  /// every sample is awaited.
  @Test func anotherHostIsAwaitedForEverySample() async {
    let host = await streamASecond(sendingAtOnce: false)
    #expect(host.atOnce == 0)
    #expect(host.awaited == 100)
  }
}
