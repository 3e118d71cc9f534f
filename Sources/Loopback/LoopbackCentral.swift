import GATT

/// A central on a `LoopbackAir`, as a client stack uses it through `CentralLink`.
public struct LoopbackCentral: CentralLink {
  let air: LoopbackAir
  /// The central's identifier, as peripherals see it.
  public let id: CentralID
  /// The largest ATT MTU this central asks for.
  public let preferredMTU: Int

  /// Reports every advertising, in-range peripheral that matches `filter`
  /// (those already on the air at once, in the order they were hosted), then
  /// those that appear later, each once.
  public func scan(filter: ScanFilter) -> AsyncStream<DiscoveredPeripheral> {
    let (stream, continuation) = AsyncStream.makeStream(of: DiscoveredPeripheral.self)
    let air = air
    air.state.withLock { state in
      let id = state.makeSerial()
      continuation.onTermination = { _ in
        air.state.withLock { state in state.scans.removeAll { $0.id == id } }
      }
      state.scans.append(LoopbackAirState.Scan(id: id, filter: filter, continuation: continuation))
      for hosted in state.peripherals {
        state.announce(hosted)
      }
    }
    return stream
  }

  /// Connects to a hosted peripheral. Throws `notFound` for an unknown one;
  /// when it is out of range, waits on the air's clock until it comes into
  /// range (then connects) or `timeout` passes (then throws `timeout`).
  public func connect(_ peripheral: PeripheralID, timeout: Duration) async throws(GATTError)
    -> any CentralConnection
  {
    try await connection(to: peripheral, timeout: timeout)
  }

  /// `connect(_:timeout:)` with the concrete connection type.
  public func connection(to peripheral: PeripheralID, timeout: Duration) async throws(GATTError)
    -> LoopbackConnection
  {
    let air = air
    let central = id
    let centralMTU = preferredMTU
    let attempt = air.state.withLock { $0.makeSerial() }
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation {
        (continuation: CheckedContinuation<Result<UInt64, GATTError>, Never>) in
        let immediate: Result<UInt64, GATTError>? = air.state.withLock { state in
          guard let hosted = state.hosted(peripheral) else {
            return .failure(GATTError(.notFound, "no peripheral \(peripheral) on this air"))
          }
          if Task.isCancelled {
            return .failure(GATTError(.cancelled, "connecting to \(peripheral) was cancelled"))
          }
          if let link = state.openLink(from: central, to: peripheral) {
            return .success(link.serial)
          }
          if hosted.reachable {
            _ = state.establishLink(from: central, centralMTU: centralMTU, to: hosted) { serial in
              continuation.resume(returning: .success(serial))
            }
            return nil
          }
          state.pendingConnections.append(
            LoopbackAirState.PendingConnection(
              id: attempt, central: central, centralMTU: centralMTU, peripheral: peripheral,
              continuation: continuation))
          return nil
        }
        if let immediate {
          continuation.resume(returning: immediate)
          return
        }
        let timer = Task(executorPreference: Task.currentExecutorPreference) {
          try? await air.clock.sleep(for: timeout)
          guard !Task.isCancelled else { return }
          Self.abandon(
            attempt, on: air,
            with: GATTError(.timeout, "connecting to \(peripheral) timed out after \(timeout)"))
        }
        let stillPending = air.state.withLock { state in
          guard let index = state.pendingConnections.firstIndex(where: { $0.id == attempt }) else {
            return false
          }
          state.pendingConnections[index].timeout = timer
          return true
        }
        if !stillPending { timer.cancel() }
      }
    } onCancel: {
      Self.abandon(
        attempt, on: air, with: GATTError(.cancelled, "connecting to \(peripheral) was cancelled"))
    }
    let serial = try result.get()
    return LoopbackConnection(air: air, serial: serial, peripheral: peripheral, central: central)
  }

  private static func abandon(_ attempt: UInt64, on air: LoopbackAir, with error: GATTError) {
    let pending = air.state.withLock { state -> LoopbackAirState.PendingConnection? in
      guard let index = state.pendingConnections.firstIndex(where: { $0.id == attempt }) else {
        return nil
      }
      return state.pendingConnections.remove(at: index)
    }
    guard let pending else { return }
    pending.timeout?.cancel()
    pending.continuation.resume(returning: .failure(error))
  }
}
