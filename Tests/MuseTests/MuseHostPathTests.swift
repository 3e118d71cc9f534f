import GATT
import GATTTestSupport
import Muse
import Testing

/// What streaming costs the headband per packet on a host that sends at
/// once and in order (the loopback's): no `await` per notification, so no
/// switches of executor around each. A `notify` or `notificationsTaken()`
/// put back on that path fails here, not only in `ci/bench-loopback`.
@Suite(.timeLimit(.minutes(1)))
struct MuseHostPathTests {
  /// A second of streaming to a counting host on the loopback's executor:
  /// 21 EEG sets of four channels, 17 accelerometer and 17 gyroscope
  /// packets, telemetry at 0 and 1 s.
  private func streamASecond(sendingAtOnce: Bool) async throws -> CountingHost {
    try await CountingHost.stream(MuseHeadband(), sendingAtOnce: sendingAtOnce, for: .seconds(1)) { headband in
      try await headband.write(
        characteristic: MuseHeadband.control, value: MuseCommand.frame("d"), type: .withResponse,
        central: CountingHost.central)
    }
  }

  @Test func aHostThatSendsAtOnceIsNeverAwaitedPerPacket() async throws {
    let host = try await streamASecond(sendingAtOnce: true)
    // The command's answer is the one notification awaited.
    #expect(host.awaited == 1)
    #expect(host.atOnce == 21 * 4 + 17 + 17 + 2)
    #expect(host.waits == 0)
  }

  /// Over BlueZ (a host that cannot send at once nor keep the order across
  /// characteristics) every packet is awaited and AF7 is waited for as before.
  @Test func anotherHostIsAwaitedAndWaitedForAroundAF7() async throws {
    let host = try await streamASecond(sendingAtOnce: false)
    #expect(host.atOnce == 0)
    #expect(host.awaited == 1 + 21 * 4 + 17 + 17 + 2)
    #expect(host.waits == 2 * 21)
  }

  /// An AUX that is neither sent nor recorded is not sampled while so, and
  /// catches up once sent: a headband switched to a preset with AUX while
  /// streaming sends the AUX packets one that had AUX all along sends.
  @Test func auxSwitchedOnMidStreamSendsWhatItWouldHaveSent() async throws {
    func auxPackets(allAlong: Bool) async throws -> [UInt16: [UInt8]] {
      let rig = MuseRig(executor: true)
      var packets: [UInt16: [UInt8]] = [:]
      try await rig.run {
        let headband = MuseHeadband(seed: 7)
        let connection = try await rig.connect(headband)
        let aux = MuseRig.collect(try await connection.notifications(of: MuseHeadband.eeg(.aux)))
        for command in [allAlong ? "p20" : "p21", "d"] {
          try await connection.write(MuseCommand.frame(command), to: MuseHeadband.control, type: .withResponse)
        }
        // Between two packets' times, then AUX on for two seconds.
        await rig.clock.advance(by: .milliseconds(1_030))
        try await connection.write(MuseCommand.frame("p20"), to: MuseHeadband.control, type: .withResponse)
        await rig.clock.advance(by: .seconds(2))
        await connection.disconnect()
        for packet in await aux.value { packets[UInt16(packet[0]) << 8 | UInt16(packet[1])] = packet }
      }
      return packets
    }
    let allAlong = try await auxPackets(allAlong: true)
    let switched = try await auxPackets(allAlong: false)
    #expect(switched.count >= 20)
    #expect(allAlong.count > switched.count)
    for (index, packet) in switched { #expect(allAlong[index] == packet, "AUX packet \(index)") }
  }
}
