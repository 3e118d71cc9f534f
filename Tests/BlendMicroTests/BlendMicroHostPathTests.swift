import BlendMicro
import GATT
import GATTTestSupport
import Testing

/// What streaming costs the board per sample on a host that sends at once
/// (the loopback's): no `await` per notification, so no switches of
/// executor around each. A `notify` put back on that path fails here, not
/// only in `ci/bench-loopback`.
@Suite(.timeLimit(.minutes(1)))
struct BlendMicroHostPathTests {
  /// Just under a second of ECG, samples 0 to 99, to a counting host.
  private func streamASecond(sendingAtOnce: Bool) async throws -> CountingHost {
    try await CountingHost.stream(BlendMicro(), sendingAtOnce: sendingAtOnce, for: .milliseconds(995)) { board in
      await board.subscriptionChanged(characteristic: BlendMicro.tx, central: CountingHost.central, subscribed: true)
    }
  }

  @Test func aHostThatSendsAtOnceIsNeverAwaitedPerSample() async throws {
    let host = try await streamASecond(sendingAtOnce: true)
    #expect(host.atOnce == 100)
    #expect(host.awaited == 0)
  }

  /// Over BlueZ, when the characteristic's socket is not in use or full,
  /// every sample is awaited.
  @Test func anotherHostIsAwaitedForEverySample() async throws {
    let host = try await streamASecond(sendingAtOnce: false)
    #expect(host.atOnce == 0)
    #expect(host.awaited == 100)
  }
}
