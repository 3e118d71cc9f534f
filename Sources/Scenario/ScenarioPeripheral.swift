import GATT

/// A device model as a scenario hosts it: the model behind the scenario's
/// faults (refused connections, late answers, refused writes), reporting what
/// happens on the link to the timeline (`after: connected`, …).
actor ScenarioPeripheral: PeripheralModel {
  /// A link event the timeline can wait for.
  enum LinkEvent: String, Sendable {
    case connected
    case disconnected
    case subscribed
  }

  nonisolated let model: any PeripheralModel
  nonisolated let faults: FaultPlan
  private var listeners: [AsyncStream<LinkEvent>.Continuation] = []
  private var host: (any PeripheralHost)?

  nonisolated var profile: GATTProfile { model.profile }
  nonisolated var advertisement: AdvertisementData { model.advertisement }

  init(model: any PeripheralModel, faults: FaultPlan) {
    self.model = model
    self.faults = faults
  }

  /// A new stream of link events from now on; it finishes when hosting stops.
  func linkEvents() -> AsyncStream<LinkEvent> {
    let (stream, continuation) = AsyncStream<LinkEvent>.makeStream()
    listeners.append(continuation)
    return stream
  }

  private func report(_ event: LinkEvent) {
    for listener in listeners { listener.yield(event) }
  }

  /// The host with the faults applied, once hosting started.
  var faultyHost: (any PeripheralHost)? { host }

  func start(host: any PeripheralHost) async {
    let faulty = FaultInjectingHost(base: host, faults: faults)
    self.host = faulty
    await model.start(host: faulty)
  }

  func stop() async {
    faults.release()
    await model.stop()
    for listener in listeners { listener.finish() }
    listeners = []
  }

  func centralConnected(_ central: CentralID) async {
    report(.connected)
    await model.centralConnected(central)
    if !faults.acceptsConnections, let host {
      // Not from inside the callback: the host reports the disconnect after `disconnect` returns.
      Task(executorPreference: Task.currentExecutorPreference) { await host.disconnect(central) }
    }
  }

  func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async {
    report(.disconnected)
    await model.centralDisconnected(central, reason: reason)
  }

  func mtuChanged(_ mtu: Int, central: CentralID) async {
    await model.mtuChanged(mtu, central: central)
  }

  func subscriptionChanged(characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool) async {
    if subscribed { report(.subscribed) }
    await model.subscriptionChanged(characteristic: characteristic, central: central, subscribed: subscribed)
  }

  func read(characteristic: CharacteristicAddress, offset: Int, central: CentralID) async throws(ATTError) -> [UInt8] {
    await answerLate()
    return try await model.read(characteristic: characteristic, offset: offset, central: central)
  }

  func write(characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID)
    async throws(ATTError)
  {
    await answerLate()
    if let error = faults.nextWriteRejection() { throw error }
    try await model.write(characteristic: characteristic, value: value, type: type, central: central)
  }

  private func answerLate() async {
    let delay = faults.responseDelay
    guard delay > .zero, let host else { return }
    try? await host.clock.sleep(for: delay)
  }
}
