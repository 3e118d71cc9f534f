import GATT

/// Wraps a device model and records what the host told it, so a test can
/// check what the peripheral side saw.
actor RecordingModel: PeripheralModel {
  enum Event: Hashable, Sendable {
    case connected(CentralID)
    case disconnected(CentralID, DisconnectReason)
    case subscribed(CharacteristicAddress, Bool)
  }

  nonisolated let inner: any PeripheralModel
  nonisolated var profile: GATTProfile { inner.profile }
  nonisolated var advertisement: AdvertisementData { inner.advertisement }
  private(set) var events: [Event] = []
  private(set) var host: (any PeripheralHost)?

  init(_ inner: any PeripheralModel) { self.inner = inner }

  func start(host: any PeripheralHost) async {
    self.host = host
    await inner.start(host: host)
  }

  func stop() async { await inner.stop() }

  func centralConnected(_ central: CentralID) async {
    events.append(.connected(central))
    await inner.centralConnected(central)
  }

  func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async {
    events.append(.disconnected(central, reason))
    await inner.centralDisconnected(central, reason: reason)
  }

  func subscriptionChanged(
    characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool
  ) async {
    events.append(.subscribed(characteristic, subscribed))
    await inner.subscriptionChanged(
      characteristic: characteristic, central: central, subscribed: subscribed)
  }

  func read(characteristic: CharacteristicAddress, offset: Int, central: CentralID)
    async throws(ATTError) -> [UInt8]
  {
    try await inner.read(characteristic: characteristic, offset: offset, central: central)
  }

  func write(
    characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID
  )
    async throws(ATTError)
  {
    try await inner.write(
      characteristic: characteristic, value: value, type: type, central: central)
  }

  /// Waits (polling, bounded) until an event satisfies `condition`.
  func waitFor(
    _ what: String, within limit: Duration = .seconds(20), _ condition: @Sendable (Event) -> Bool
  ) async throws {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
      if events.contains(where: condition) { return }
      try await Task.sleep(for: .milliseconds(50))
    }
    throw GATTError(.timeout, "the peripheral never saw \(what); it saw \(events)")
  }
}
