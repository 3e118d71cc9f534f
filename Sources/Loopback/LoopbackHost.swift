import GATT

/// The `PeripheralHost` the loopback air gives a hosted model.
///
/// Notifications and indications go straight into the subscribed centrals'
/// streams, in order; an indication counts as confirmed once it is delivered.
struct LoopbackHost: PeripheralHost {
  let air: LoopbackAir
  let peripheral: PeripheralID
  /// Which hosting of `peripheral` this host belongs to.
  let generation: UInt64
  /// Where this host's notifications went last, while the links stay as they were.
  let routes = NotificationRoutes()

  var clock: any Clock<Duration> { air.clock }

  nonisolated(nonsending) func notify(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError) {
    try send(value, characteristic: characteristic, as: .notify)
  }

  func notifyAtOnce(_ value: [UInt8], characteristic: CharacteristicAddress) throws(GATTError) -> Bool {
    try send(value, characteristic: characteristic, as: .notify)
    return true
  }

  /// Values go into the subscribers' streams within the sending call, one after another.
  var deliversInOrder: Bool { true }

  nonisolated(nonsending) func indicate(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError)
  {
    try send(value, characteristic: characteristic, as: .indicate)
  }

  func subscribers(of characteristic: CharacteristicAddress) async -> [CentralID] {
    air.state.withLock { state in
      state.openLinks(to: peripheral, generation: generation)
        .filter { $0.subscriptions.contains(characteristic) }
        .map(\.central)
    }
  }

  var connectedCentrals: [CentralID] {
    get async {
      air.state.withLock { state in
        state.openLinks(to: peripheral, generation: generation).map(\.central)
      }
    }
  }

  func mtu(for central: CentralID) async -> Int? {
    air.state.withLock { state in
      state.openLinks(to: peripheral, generation: generation).first { $0.central == central }?.mtu
    }
  }

  func disconnect(_ central: CentralID) async {
    let deferred = air.state.withLock { state in
      state.openLinks(to: peripheral, generation: generation)
        .filter { $0.central == central }
        .flatMap { state.closeLink($0.serial, centralReason: .remote, peripheralReason: .local) }
    }
    for work in deferred { work() }
  }

  func setAdvertisingEnabled(_ enabled: Bool) async {
    // Throws only for new advertisement data, and none is given.
    try? air.setAdvertising(enabled, peripheral, generation: generation)
  }

  private func send(
    _ value: [UInt8], characteristic: CharacteristicAddress, as kind: CharacteristicProperties
  )
    throws(GATTError)
  {
    // The values go out after the air's lock is released: a consumer may
    // take them on this very call (`NotificationStream.receiveEach`) and act on
    // the air in turn.
    let route = try air.state.withLock { state throws(GATTError) -> NotificationRoutes.Route in
      if let route = routes.route(characteristic, kind, epoch: state.epoch) {
        if let refusal = route.refusal { throw refusal }
        if value.count <= route.smallestMTU - 3 { return route }
      }
      guard let index = state.peripherals.firstIndex(where: { $0.id == peripheral }),
        state.peripherals[index].generation == generation
      else {
        throw GATTError(.notFound, "peripheral \(peripheral) is no longer hosted")
      }
      let definition = try NotificationRule.definition(
        in: state.peripherals[index].profile, at: characteristic, sending: kind)
      // The subscribed links, oldest first, found without building arrays
      // in the common case of one: this runs for every notification.
      var first: UInt64?
      var others: [UInt64] = []
      var tooSmall: (serial: UInt64, mtu: Int, central: CentralID)?
      var smallestMTU = Int.max
      for (serial, link) in state.links
      where link.isOpen && link.peripheral == peripheral && link.generation == generation
        && link.subscriptions.contains(characteristic)
      {
        smallestMTU = min(smallestMTU, link.mtu)
        if value.count > link.mtu - 3, serial < tooSmall?.serial ?? .max {
          tooSmall = (serial, link.mtu, link.central)
        }
        if first == nil { first = serial } else { others.append(serial) }
      }
      guard let first else {
        let refusal = NotificationRule.noSubscribers(definition, at: characteristic)
        routes.remember(
          NotificationRoutes.Route(
            characteristic: characteristic, kind: kind, smallestMTU: .max, first: nil, others: [], refusal: refusal),
          epoch: state.epoch)
        throw refusal
      }
      if let tooSmall {
        try NotificationRule.checkLength(
          value.count, mtu: tooSmall.mtu, central: tooSmall.central, definition, at: characteristic, sending: kind)
      }
      // The listeners in link order; the first one without an array.
      var one: NotificationStream.Continuation?
      var more: [NotificationStream.Continuation] = []
      func collect(_ serial: UInt64) {
        for listener in state.links[serial]!.listeners where listener.characteristic == characteristic {
          if one == nil { one = listener.continuation } else { more.append(listener.continuation) }
        }
      }
      if others.isEmpty {
        collect(first)
      } else {
        for serial in ([first] + others).sorted() { collect(serial) }
      }
      let route = NotificationRoutes.Route(
        characteristic: characteristic, kind: kind, smallestMTU: smallestMTU, first: one, others: more, refusal: nil)
      routes.remember(route, epoch: state.epoch)
      return route
    }
    route.first?.yield(value)
    for continuation in route.others { continuation.yield(value) }
  }
}
