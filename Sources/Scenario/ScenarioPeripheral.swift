import GATT

/// A device model as a scenario hosts it: the model behind the scenario's
/// faults (refused connections, late answers, refused writes), reporting what
/// happens on the link to the timeline (`after: connected`, …) and recording
/// what the central did (``CentralActivity``).
actor ScenarioPeripheral: PeripheralModel {
  nonisolated let model: any PeripheralModel
  nonisolated let faults: FaultPlan
  /// What the centrals did to this device.
  nonisolated let activity: CentralActivityRecorder
  /// What the timeline can wait for: link events and the firmware's events.
  nonisolated let events = DeviceEventFeed()
  private var host: (any PeripheralHost)?

  nonisolated var profile: GATTProfile { model.profile }
  nonisolated var advertisement: AdvertisementData { model.advertisement }

  init(model: any PeripheralModel, faults: FaultPlan, activity: CentralActivityRecorder) {
    self.model = model
    self.faults = faults
    self.activity = activity
  }

  /// The host with the faults applied, once hosting started.
  var faultyHost: (any PeripheralHost)? { host }

  func start(host: any PeripheralHost) async {
    let faulty = FaultInjectingHost(base: host, faults: faults, activity: activity, events: events)
    self.host = faulty
    await model.start(host: faulty)
  }

  func catchUp() async {
    await model.catchUp()
  }

  func stop() async {
    faults.release()
    await model.stop()
    events.finish()
  }

  func centralConnected(_ central: CentralID) async {
    activity.connected(central)
    events.report(.connected)
    await model.centralConnected(central)
    if !faults.acceptsConnections, let host {
      // Not from inside the callback: the host reports the disconnect after `disconnect` returns.
      Task(executorPreference: Task.currentExecutorPreference) { await host.disconnect(central) }
    }
  }

  func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async {
    activity.disconnected(central, reason: reason)
    events.report(.disconnected)
    await model.centralDisconnected(central, reason: reason)
  }

  func hostEvent(_ event: HostEvent) async {
    activity.hostEvent(event)
    await model.hostEvent(event)
  }

  func mtuChanged(_ mtu: Int, central: CentralID) async {
    activity.mtu(mtu, central: central)
    await model.mtuChanged(mtu, central: central)
  }

  func subscriptionChanged(characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool) async {
    let key = profile.characteristicKey(at: characteristic)
    activity.subscription(key, subscribed: subscribed)
    if subscribed { events.report(.subscribed(key)) }
    await model.subscriptionChanged(characteristic: characteristic, central: central, subscribed: subscribed)
  }

  func read(characteristic: CharacteristicAddress, offset: Int, central: CentralID) async throws(ATTError) -> [UInt8] {
    await answerLate()
    do {
      let value = try await model.read(characteristic: characteristic, offset: offset, central: central)
      if offset == 0 { activity.access(.read, profile.characteristicKey(at: characteristic), bytes: [], error: nil) }
      return value
    } catch {
      activity.access(.read, profile.characteristicKey(at: characteristic), bytes: [], error: error)
      throw error
    }
  }

  func write(characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID)
    async throws(ATTError)
  {
    await answerLate()
    let kind: CentralActivity.Access.Kind = type == .withResponse ? .write : .writeWithoutResponse
    let key = profile.characteristicKey(at: characteristic)
    if let error = faults.nextWriteRejection() {
      activity.access(kind, key, bytes: value, error: error)
      throw error
    }
    do {
      try await model.write(characteristic: characteristic, value: value, type: type, central: central)
      activity.access(kind, key, bytes: value, error: nil)
    } catch {
      activity.access(kind, key, bytes: value, error: error)
      throw error
    }
  }

  private func answerLate() async {
    let delay = faults.responseDelay
    guard delay > .zero, let host else { return }
    try? await host.clock.sleep(for: delay)
  }
}
