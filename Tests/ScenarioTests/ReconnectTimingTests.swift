import GATT
import Synchronization
import Testing

@testable import Scenario

/// `central-reconnected` is timed from when the central lost the link. A
/// device's own disconnect lets go at once, but over BlueZ the link goes down
/// only when bluetoothd's disconnect timer fires (2 s; 4 s in a loaded lab),
/// and the central cannot connect again before.
@Suite struct ReconnectTimingTests {
  static let check = Expectation(
    device: "sensor", check: .centralReconnected(within: .seconds(10), subscribedAgain: ["heart-rate"]),
    location: SourceLocation(file: "generic-link-lost.yaml", line: 25, column: 5))

  /// The lab run that failed: the device asked at 12.411 s, the link was down
  /// at 16.6 s, and the central connected again at 21.1 s and subscribed at 22.9 s.
  static func activity(linkEndedAt: Double?) -> CentralActivity {
    var activity = CentralActivity()
    var first = CentralActivity.Connection(central: "00:AA:01:01:00:01", connectedAt: 7.035)
    first.disconnectedAt = 12.411
    first.endedBy = .local
    first.linkEndedAt = linkEndedAt
    activity.connections = [first, CentralActivity.Connection(central: "00:AA:01:01:00:01", connectedAt: 21.088)]
    activity.subscriptions = [
      CentralActivity.Subscription(characteristic: "heart-rate", subscribed: true, at: 7.1),
      CentralActivity.Subscription(characteristic: "heart-rate", subscribed: false, at: 12.411),
      CentralActivity.Subscription(characteristic: "heart-rate", subscribed: true, at: 22.935),
    ]
    activity.faultDisconnects = [12.4]
    return activity
  }

  @Test func aReconnectIsTimedFromWhenTheLinkWasDown() {
    let result = CentralActivityCheck.evaluate(Self.check, Self.activity(linkEndedAt: 16.6))
    #expect(result.passed, "\(result.observed)")
    #expect(result.observed == "1 dropped, 1 reconnected in time")
  }

  @Test func withoutTheLinksEndItIsTimedFromTheDevicesDisconnect() {
    let result = CentralActivityCheck.evaluate(Self.check, Self.activity(linkEndedAt: nil))
    #expect(!result.passed)
    #expect(
      result.observed
        == "dropped at 12.411 s, connected again after 8.677 s but subscribed to 'heart-rate' only after 10.524 s")
  }

  @Test func aLateReconnectSaysWhenTheLinkWentDown() {
    let result = CentralActivityCheck.evaluate(Self.check, Self.activity(linkEndedAt: 12.6))
    #expect(!result.passed)
    #expect(
      result.observed
        == "dropped at 12.411 s (the link down at 12.600 s), connected again after 8.488 s "
        + "but subscribed to 'heart-rate' only after 10.335 s")
  }

  /// The connections a device recorded when it connected at 7 s and ended
  /// the link at 12.4 s through the fault host, whose transport did what
  /// `meanwhile` says (on the recorder, and the seconds) before returning.
  static func disconnectAt12s(
    meanwhile: @escaping @Sendable (CentralActivityRecorder, ManualSeconds, CentralID) -> Void
  ) async -> [CentralActivity.Connection] {
    let clock = ManualSeconds()
    let activity = CentralActivityRecorder(elapsed: { clock.now })
    let central = CentralID("00:AA:01:01:00:01")
    let base = SlowDisconnectHost(onDisconnect: { meanwhile(activity, clock, central) })
    let host = FaultInjectingHost(base: base, faults: FaultPlan(), activity: activity, events: DeviceEventFeed())
    clock.now = 7
    activity.connected(central)
    clock.now = 12.4
    await host.disconnect(central)
    return activity.snapshot.connections
  }

  /// The fault host records the link's end when the transport's disconnect
  /// returns, after the device's own end that the transport reported first.
  @Test func theFaultHostRecordsTheLinksEndWhenTheDisconnectReturns() async {
    let connections = await Self.disconnectAt12s { activity, clock, central in
      activity.disconnected(central, reason: .local)
      clock.now = 16.6
    }
    #expect(connections[0].disconnectedAt == 12.4)
    #expect(connections[0].linkEndedAt == 16.6)
    #expect(connections[0].droppedAt == 16.6)
  }

  /// A disconnect whose answer came late (at its timeout) does not put the
  /// link's end after the central's next connection.
  @Test func theLinksEndIsNeverAfterTheNextConnection() async {
    let connections = await Self.disconnectAt12s { activity, clock, central in
      activity.disconnected(central, reason: .local)
      clock.now = 15
      activity.connected(central)
      clock.now = 37.4
    }
    #expect(connections.count == 2)
    #expect(connections[0].linkEndedAt == 15)
    #expect(connections[1].disconnectedAt == nil)
  }
}

/// Seconds a test sets by hand.
final class ManualSeconds: Sendable {
  private let value = Mutex(0.0)
  var now: Double {
    get { value.withLock { $0 } }
    set { value.withLock { $0 = newValue } }
  }
}

/// A host whose disconnect ends the device's side first and returns later.
private struct SlowDisconnectHost: PeripheralHost {
  let onDisconnect: @Sendable () -> Void
  var clock: any Clock<Duration> { ContinuousClock() }
  func notify(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError) {}
  func indicate(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError) {}
  func subscribers(of characteristic: CharacteristicAddress) async -> [CentralID] { [] }
  var connectedCentrals: [CentralID] { get async { [] } }
  func mtu(for central: CentralID) async -> Int? { nil }
  func disconnect(_ central: CentralID) async { onDisconnect() }
  func setAdvertisingEnabled(_ enabled: Bool) async {}
  func firmwareEvent(_ name: String, detail: String) {}
  func notificationsTaken() async {}
}
