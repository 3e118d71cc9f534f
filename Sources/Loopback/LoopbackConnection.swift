import GATT

/// A connection made by a `LoopbackCentral`.
///
/// Requests go through the peripheral's event queue, so the model sees them
/// in the order they were issued, interleaved correctly with connection events.
/// A request the model was already handling when the link ended still reaches
/// the model, but its answer does not: it throws `disconnected(reason)`.
public struct LoopbackConnection: CentralConnection {
  let air: LoopbackAir
  let serial: UInt64
  /// The peripheral at the other end.
  public let peripheral: PeripheralID
  /// This side's identifier, as the peripheral sees it.
  public let central: CentralID

  public var mtu: Int {
    get async { air.state.withLock { $0.links[serial]?.mtu ?? LoopbackAir.defaultMTU } }
  }

  public var disconnectReason: DisconnectReason? {
    get async { air.state.withLock { $0.links[serial]?.closedReason } }
  }

  public func discoverServices() async throws(GATTError) -> [DiscoveredService] {
    let profile = try air.state.withLock { state throws(GATTError) in
      try target(in: state).hosted.profile
    }
    return profile.services.map { service in
      DiscoveredService(
        uuid: service.uuid, isPrimary: service.isPrimary,
        characteristics: service.characteristics.map { characteristic in
          let managed: [BluetoothUUID] =
            characteristic.properties.isDisjoint(with: [.notify, .indicate])
            ? [] : [.clientCharacteristicConfiguration]
          return DiscoveredCharacteristic(
            address: service.address(of: characteristic.uuid),
            properties: characteristic.properties,
            descriptors: characteristic.descriptors.map(\.uuid) + managed)
        })
    }
  }

  public func read(_ characteristic: CharacteristicAddress) async throws(GATTError) -> [UInt8] {
    let mtu = try air.state.withLock { state throws(GATTError) in
      let (link, hosted) = try target(in: state)
      let definition = try Self.definition(characteristic, in: hosted)
      guard definition.properties.contains(.read) else {
        throw GATTError(.notSupported, "\(definition.name) (\(characteristic)) cannot be read")
      }
      return link.mtu
    }
    let packet = mtu - 1
    var value: [UInt8] = []
    repeat {
      let offset = value.count
      let chunk = try await request { model, central async throws(ATTError) in
        try await model.read(characteristic: characteristic, offset: offset, central: central)
      }
      value += chunk.prefix(packet)
      if chunk.count < packet { break }
    } while value.count < GATTProfile.maximumAttributeLength
    return Array(value.prefix(GATTProfile.maximumAttributeLength))
  }

  /// Serves the descriptor's declared value, as a host does (the model is not asked).
  public func read(descriptor: BluetoothUUID, of characteristic: CharacteristicAddress) async throws(GATTError)
    -> [UInt8]
  {
    let declared = try air.state.withLock { state throws(GATTError) in
      let (_, hosted) = try target(in: state)
      let definition = try Self.definition(characteristic, in: hosted)
      guard let declared = definition.descriptors.first(where: { $0.uuid == descriptor }) else {
        throw GATTError(.notFound, "\(definition.name) (\(characteristic)) has no descriptor \(descriptor)")
      }
      return declared
    }
    guard declared.permissions.contains(.read) else {
      throw GATTError(.attribute(.readNotPermitted), "the peripheral refused to read descriptor \(descriptor)")
    }
    return declared.value
  }

  public func write(_ value: [UInt8], to characteristic: CharacteristicAddress, type: WriteType)
    async throws(GATTError)
  {
    let refusal: ATTError? = try air.state.withLock { state throws(GATTError) in
      let (link, hosted) = try target(in: state)
      let definition = try Self.definition(characteristic, in: hosted)
      let needed: CharacteristicProperties = type == .withResponse ? .write : .writeWithoutResponse
      guard definition.properties.contains(needed) else {
        throw GATTError(
          .notSupported,
          "\(definition.name) (\(characteristic)) cannot be written \(type); its properties are \(definition.properties)"
        )
      }
      if type == .withoutResponse, value.count > link.mtu - 3 {
        throw GATTError(
          .valueTooLong,
          "a write without response of \(value.count) bytes exceeds ATT_MTU - 3 = \(link.mtu - 3) bytes"
        )
      }
      let limit = definition.maximumLength ?? GATTProfile.maximumAttributeLength
      guard value.count <= limit else { return .invalidAttributeValueLength }
      if type == .withoutResponse {
        let model = hosted.model
        let central = link.central
        hosted.events.enqueue {
          try? await model.write(
            characteristic: characteristic, value: value, type: .withoutResponse, central: central)
        }
      }
      return nil
    }
    if let refusal {
      guard type == .withResponse else { return }
      throw GATTError(.attribute(refusal), "the peripheral refused the write: \(refusal)")
    }
    guard type == .withResponse else { return }
    try await request { model, central async throws(ATTError) in
      try await model.write(
        characteristic: characteristic, value: value, type: .withResponse, central: central)
    }
  }

  public func notifications(of characteristic: CharacteristicAddress) async throws(GATTError)
    -> NotificationStream
  {
    let (stream, continuation) = NotificationStream.makeStream()
    let air = air
    let serial = serial
    try await withCheckedContinuation {
      (done: CheckedContinuation<Result<Void, GATTError>, Never>) in
      let outcome: Result<Void, GATTError>? = air.state.withLock { state in
        do throws(GATTError) {
          let (link, hosted) = try target(in: state)
          let definition = try Self.definition(characteristic, in: hosted)
          guard !definition.properties.isDisjoint(with: [.notify, .indicate]) else {
            throw GATTError(
              .notSupported, "\(definition.name) (\(characteristic)) neither notifies nor indicates"
            )
          }
          let id = state.makeSerial()
          continuation.onTermination = { _ in
            air.state.withLock { state in
              Self.removeListener(id, characteristic: characteristic, serial: serial, in: &state)
            }
          }
          let listener = LoopbackAirState.Listener(
            id: id, characteristic: characteristic, continuation: continuation)
          state.links[serial]?.listeners.append(listener)
          guard !link.subscriptions.contains(characteristic) else { return .success(()) }
          state.links[serial]?.subscriptions.append(characteristic)
          let model = hosted.model
          let central = link.central
          hosted.events.enqueue {
            await model.subscriptionChanged(
              characteristic: characteristic, central: central, subscribed: true)
            done.resume(returning: .success(()))
          }
          return nil
        } catch {
          return .failure(error)
        }
      }
      if let outcome { done.resume(returning: outcome) }
    }.get()
    return stream
  }

  public func disconnect() async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      let deferred = air.state.withLock { state in
        state.closeLink(serial, centralReason: .local, peripheralReason: .remote) { done.resume() }
      }
      for work in deferred { work() }
    }
  }

  public func events() -> AsyncStream<ConnectionEvent> {
    let (stream, continuation) = AsyncStream.makeStream(of: ConnectionEvent.self)
    let air = air
    let serial = serial
    let closed: DisconnectReason? = air.state.withLock { state in
      guard let link = state.links[serial] else { return .other("unknown connection") }
      if let reason = link.closedReason { return reason }
      let id = state.makeSerial()
      continuation.onTermination = { _ in
        air.state.withLock { state in state.links[serial]?.observers.removeAll { $0.id == id } }
      }
      state.links[serial]?.observers.append(
        LoopbackAirState.Observer(id: id, continuation: continuation))
      return nil
    }
    if let closed {
      continuation.yield(.disconnected(closed))
      continuation.finish()
    }
    return stream
  }

  /// Runs a request on the model through its event queue and returns its
  /// answer, or throws what the model threw as `attribute`.
  private func request<T: Sendable>(
    _ body: @escaping @Sendable (any PeripheralModel, CentralID) async throws(ATTError) -> T
  ) async throws(GATTError) -> T {
    let air = air
    let serial = serial
    let answer: Result<T, ATTError> = try await withCheckedContinuation {
      (done: CheckedContinuation<Result<Result<T, ATTError>, GATTError>, Never>) in
      let refused: GATTError? = air.state.withLock { state in
        do throws(GATTError) {
          let (link, hosted) = try target(in: state)
          let model = hosted.model
          let central = link.central
          hosted.events.enqueue {
            let answer: Result<T, ATTError>
            do throws(ATTError) {
              answer = .success(try await body(model, central))
            } catch {
              answer = .failure(error)
            }
            done.resume(returning: .success(answer))
          }
          return nil
        } catch {
          return error
        }
      }
      if let refused { done.resume(returning: .failure(refused)) }
    }.get()
    if let reason = air.state.withLock({ $0.links[serial]?.closedReason }) {
      throw GATTError(
        .disconnected(reason), "\(peripheral) disconnected before answering: \(reason)")
    }
    switch answer {
    case .success(let value): return value
    case .failure(let error):
      throw GATTError(.attribute(error), "\(peripheral) answered with \(error)")
    }
  }

  /// The open link and its peripheral, or `notConnected`.
  private func target(in state: LoopbackAirState) throws(GATTError) -> (
    link: LoopbackAirState.Link, hosted: LoopbackAirState.Hosted
  ) {
    guard let link = state.links[serial], link.isOpen, let hosted = state.hosted(for: link) else {
      let reason = state.links[serial]?.closedReason.map { ": \($0)" } ?? ""
      throw GATTError(.notConnected, "not connected to \(peripheral)\(reason)")
    }
    return (link, hosted)
  }

  private static func definition(
    _ characteristic: CharacteristicAddress, in hosted: LoopbackAirState.Hosted
  )
    throws(GATTError) -> CharacteristicDefinition
  {
    guard let definition = hosted.profile.characteristic(at: characteristic) else {
      throw GATTError(.notFound, "\(hosted.id) has no characteristic \(characteristic)")
    }
    return definition
  }

  /// Drops a notification stream; the last one for a characteristic unsubscribes.
  private static func removeListener(
    _ id: UInt64, characteristic: CharacteristicAddress, serial: UInt64,
    in state: inout LoopbackAirState
  ) {
    guard var link = state.links[serial] else { return }
    link.listeners.removeAll { $0.id == id }
    let lastOne = link.isOpen && !link.listeners.contains { $0.characteristic == characteristic }
    if lastOne, link.subscriptions.contains(characteristic), let hosted = state.hosted(for: link) {
      link.subscriptions.removeAll { $0 == characteristic }
      let model = hosted.model
      let central = link.central
      hosted.events.enqueue {
        await model.subscriptionChanged(
          characteristic: characteristic, central: central, subscribed: false)
      }
    }
    state.links[serial] = link
  }
}
