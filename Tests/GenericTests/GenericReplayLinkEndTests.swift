import GATT
import Generic
import Synchronization
import Testing

/// A replay tied to the link ends with it. The device hears of the link's
/// end a moment after its host (over BlueZ, through its event queue), and a
/// value due in that moment finds no central: it is not a skipped value.
/// A replay from hosting, with nobody connected, does skip.
@Suite(.timeLimit(.minutes(1)))
struct GenericReplayLinkEndTests {
  /// A host whose link has just gone: nobody connected, every notification refused.
  final class LinkGoneHost: PeripheralHost {
    let events = Mutex<[String]>([])
    let clock: any Clock<Duration> = ContinuousClock()

    func notify(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError) {
      throw GATTError(.noSubscribers, "no central is subscribed")
    }
    func indicate(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError) {}
    func subscribers(of characteristic: CharacteristicAddress) async -> [CentralID] { [] }
    var connectedCentrals: [CentralID] { get async { [] } }
    func mtu(for central: CentralID) async -> Int? { nil }
    func disconnect(_ central: CentralID) async {}
    func setAdvertisingEnabled(_ enabled: Bool) async {}
    func firmwareEvent(_ name: String, detail: String) { events.withLock { $0.append(name) } }
  }

  static let entries: [NotificationReplay.Entry] = [
    .init(time: .milliseconds(1), characteristic: GenericReplayOrderTests.first, value: [1]),
    .init(time: .milliseconds(2), characteristic: GenericReplayOrderTests.first, value: [2]),
  ]

  /// Waits until `done` holds, for 10 s at most.
  func waitUntil(_ done: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !(await done()), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
  }

  /// A device replaying the two entries once, from `anchor`.
  func device(from anchor: NotificationReplay.Anchor) -> GenericPeripheral {
    GenericPeripheral(
      profile: GenericReplayOrderTests.profile, advertisement: AdvertisementData(localName: "Sensor"),
      replays: [NotificationReplay(entries: Self.entries, anchor: anchor, loops: false)])
  }

  @Test func aReplayTiedToTheLinkDoesNotSkipOnceTheLinkHasGone() async throws {
    let device = device(from: .subscribed)
    let host = LinkGoneHost()
    await device.start(host: host)
    await device.subscriptionChanged(
      characteristic: GenericReplayOrderTests.first, central: "00:AA:01:00:00:01", subscribed: true)
    // Both values come due and find the link gone; the replay then ends.
    try await Task.sleep(for: .milliseconds(100))
    await device.stop()
    #expect(await device.skipped == 0)
    #expect(await device.sent == 0)
    #expect(host.events.withLock { $0 }.isEmpty)
  }

  @Test func aReplayFromHostingSkipsWhileNobodyIsConnected() async throws {
    let device = device(from: .hosting)
    let host = LinkGoneHost()
    await device.start(host: host)
    try await waitUntil { await device.skipped == 2 }
    await device.stop()
    #expect(await device.skipped == 2)
    #expect(host.events.withLock { $0 } == ["replay-skipped", "replay-skipped"])
  }
}
