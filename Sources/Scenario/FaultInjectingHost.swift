import GATT

/// The `PeripheralHost` a device model sees in a scenario: the transport's
/// host, with the scenario's faults applied to what the model sends.
struct FaultInjectingHost: PeripheralHost {
  let base: any PeripheralHost
  let faults: FaultPlan
  /// Where the firmware's events go (device-side observations).
  let activity: CentralActivityRecorder
  /// Where the timeline hears of them (`after: start-streaming`).
  let events: DeviceEventFeed

  var clock: any Clock<Duration> { base.clock }

  nonisolated(nonsending) func notify(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError) {
    // Decided without an await unless a stall holds notifications: each await
    // costs the notifying task a switch of executor.
    let verdict: FaultPlan.Verdict
    if let now = faults.verdictNow() { verdict = now } else { verdict = await faults.nextNotification() }
    switch verdict {
    case .send: try await base.notify(value, characteristic: characteristic)
    case .drop:
      // Lost on air: the model cannot tell, as with a real link.
      if await base.subscribers(of: characteristic).isEmpty { throw GATTError(.noSubscribers, "no subscribers") }
    case .corrupt: try await base.notify(FaultPlan.corrupt(value), characteristic: characteristic)
    case .withhold: break
    }
  }

  /// At once only when the plan lets the value through untouched (its
  /// verdict then changes nothing) and the transport's host sends at once;
  /// any other fate is left to `notify`, which decides it.
  func notifyAtOnce(_ value: [UInt8], characteristic: CharacteristicAddress) throws(GATTError) -> Bool {
    guard faults.sendsNextNow() else { return false }
    return try base.notifyAtOnce(value, characteristic: characteristic)
  }

  nonisolated(nonsending) func indicate(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError)
  {
    switch await faults.nextNotification() {
    case .send: try await base.indicate(value, characteristic: characteristic)
    case .drop:
      // An indication that never arrives is never confirmed: the link layer gives up.
      throw GATTError(.timeout, "indication lost (scenario fault)")
    case .corrupt: try await base.indicate(FaultPlan.corrupt(value), characteristic: characteristic)
    case .withhold: break
    }
  }

  func subscribers(of characteristic: CharacteristicAddress) async -> [CentralID] {
    await base.subscribers(of: characteristic)
  }

  var connectedCentrals: [CentralID] { get async { await base.connectedCentrals } }

  func mtu(for central: CentralID) async -> Int? { await base.mtu(for: central) }

  func disconnect(_ central: CentralID) async {
    await base.disconnect(central)
    activity.linkEnded(central)
  }

  func setAdvertisingEnabled(_ enabled: Bool) async { await base.setAdvertisingEnabled(enabled) }

  func firmwareEvent(_ name: String, detail: String) {
    activity.firmwareEvent(name, detail: detail)
    events.report(DeviceEventFeed.Event(name: name))
  }

  nonisolated(nonsending) func notificationsTaken() async { await base.notificationsTaken() }

  /// A stall holds notifications back in order: the base's order stands.
  var deliversInOrder: Bool { base.deliversInOrder }
}
