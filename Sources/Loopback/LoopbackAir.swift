import GATT
import Synchronization

/// An in-process radio: hosts any number of device models and gives out
/// centrals that scan for them and connect to them, with the GATT seams wired
/// directly to each other and all timing on one clock (normally a `VirtualClock`).
///
/// It behaves like ATT where tests can tell: the ATT MTU is the smaller of the
/// two sides' preferred MTUs (23 by default), reads longer than ATT_MTU − 1
/// continue at an offset, notifications and writes without response longer
/// than ATT_MTU − 3 are refused, writes longer than a characteristic's
/// `maximumLength` are refused with `invalidAttributeValueLength` (dropped,
/// when without response), and a disconnect on either side is reported
/// to the other. It is deterministic: every change of state happens in the
/// order operations are issued, each model's callbacks run one at a time in
/// that order, and notifications reach each stream in the order they were sent.
///
/// A hosted peripheral goes on the air once its model has started, and
/// advertises while in range unless its model switched its advertising off,
/// also while connected; a scan reports each peripheral once.
public final class LoopbackAir: Sendable {
  /// The clock the hosted models and connection timeouts use.
  public let clock: any Clock<Duration>
  let state = Mutex(LoopbackAirState())

  /// The ATT MTU before any exchange.
  public static let defaultMTU = 23
  /// The largest ATT MTU.
  public static let maximumMTU = 517

  /// An air whose models and timeouts use `clock`.
  public init(clock: any Clock<Duration>) {
    self.clock = clock
  }

  /// Hosts a device model: starts it, then advertises it. Returns once the
  /// model's `start(host:)` has returned.
  ///
  /// - Parameters:
  ///   - address: The peripheral's identifier; made up when `nil`.
  ///   - rssi: What scans report as its signal strength.
  ///   - preferredMTU: The largest ATT MTU it accepts (23...517).
  /// - Throws: `invalidArgument` for an address in use, a bad MTU, or an
  ///   advertisement that does not fit a legacy advertisement and scan response.
  @discardableResult
  public func host(
    _ model: some PeripheralModel,
    address: PeripheralID? = nil,
    rssi: Int = -50,
    preferredMTU: Int = LoopbackAir.defaultMTU
  ) async throws(GATTError) -> PeripheralID {
    try Self.validate(mtu: preferredMTU)
    let advertisement = model.advertisement
    do {
      _ = try advertisement.legacyLayout()
    } catch {
      throw GATTError(.invalidArgument, "cannot advertise: \(error)")
    }
    let profile = model.profile
    let events = PeripheralEventQueue()
    let hostedModel: any PeripheralModel = model
    let id: PeripheralID = try await withCheckedContinuation {
      (started: CheckedContinuation<Result<PeripheralID, GATTError>, Never>) in
      let outcome: Result<PeripheralID, GATTError>? = state.withLock { state in
        let id = address ?? state.makePeripheralAddress()
        guard state.hosted(id) == nil else {
          return .failure(
            GATTError(.invalidArgument, "a peripheral with address \(id) is already hosted"))
        }
        let hosted = LoopbackAirState.Hosted(
          id: id, generation: state.makeSerial(), model: hostedModel, profile: profile,
          advertisement: advertisement,
          rssi: rssi, preferredMTU: preferredMTU, inRange: true, events: events)
        state.peripherals.append(hosted)
        let host = LoopbackHost(air: self, peripheral: id, generation: hosted.generation)
        events.enqueue {
          await hostedModel.start(host: host)
          // On the air once started, as over BlueZ: a model that switches
          // its advertising off while starting is never seen advertising.
          self.wentOnTheAir(id, generation: hosted.generation)
          started.resume(returning: .success(id))
        }
        return nil
      }
      if let outcome { started.resume(returning: outcome) }
    }.get()
    return id
  }

  /// A hosting's model has started: scans see it and pending connections
  /// reach it from now on, if it advertises and is in range.
  private func wentOnTheAir(_ peripheral: PeripheralID, generation: UInt64) {
    let deferred: [LoopbackAirState.Deferred] = state.withLock { state in
      guard let index = state.peripherals.firstIndex(where: { $0.id == peripheral && $0.generation == generation })
      else { return [] }
      state.peripherals[index].started = true
      let hosted = state.peripherals[index]
      guard hosted.reachable else { return [] }
      state.announce(hosted)
      return state.connectPending(to: hosted)
    }
    for work in deferred { work() }
  }

  /// Stops hosting a peripheral: it disconnects its centrals (they see
  /// `.remote`), stops advertising, and its model's `stop()` is called.
  /// Returns once `stop()` has returned. Pending connections to it fail with `notFound`.
  public func remove(_ peripheral: PeripheralID) async {
    await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
      let deferred: [LoopbackAirState.Deferred] = state.withLock { state in
        guard let hosted = state.hosted(peripheral) else { return [{ stopped.resume() }] }
        var deferred: [LoopbackAirState.Deferred] = []
        for link in state.openLinks(to: peripheral, generation: hosted.generation) {
          deferred += state.closeLink(link.serial, centralReason: .remote, peripheralReason: .local)
        }
        for pending in state.pendingConnections where pending.peripheral == peripheral {
          pending.timeout?.cancel()
          deferred.append {
            pending.continuation.resume(
              returning: .failure(
                GATTError(.notFound, "peripheral \(peripheral) is no longer there")))
          }
        }
        state.pendingConnections.removeAll { $0.peripheral == peripheral }
        state.peripherals.removeAll { $0.id == peripheral }
        let model = hosted.model
        hosted.events.enqueue {
          await model.stop()
          stopped.resume()
        }
        hosted.events.finish()
        return deferred
      }
      for work in deferred { work() }
    }
  }

  /// Removes every peripheral (as `remove(_:)` does, in hosting order) and
  /// ends every scan. Models keep their host, and the host keeps the air, so
  /// call this when done with an air to let both go.
  public func removeAll() async {
    for peripheral in peripherals {
      await remove(peripheral)
    }
    let scans = state.withLock { state in
      defer { state.scans.removeAll() }
      return state.scans
    }
    for scan in scans {
      scan.continuation.finish()
    }
  }

  /// Makes a central on this air.
  ///
  /// - Parameters:
  ///   - address: The central's identifier, as peripherals see it; made up when `nil`.
  ///   - preferredMTU: The largest ATT MTU it asks for (23...517).
  /// - Throws: `invalidArgument` for an address in use or a bad MTU.
  public func makeCentral(address: CentralID? = nil, preferredMTU: Int = LoopbackAir.defaultMTU)
    throws(GATTError)
    -> LoopbackCentral
  {
    try Self.validate(mtu: preferredMTU)
    let id = try state.withLock { state throws(GATTError) in
      let id = address ?? state.makeCentralAddress()
      guard !state.centrals.contains(id) else {
        throw GATTError(.invalidArgument, "a central with address \(id) already exists")
      }
      state.centrals.append(id)
      return id
    }
    return LoopbackCentral(air: self, id: id, preferredMTU: preferredMTU)
  }

  /// The hosted peripherals, in the order they were hosted.
  public var peripherals: [PeripheralID] {
    state.withLock { $0.peripherals.map(\.id) }
  }

  /// Whether a hosted peripheral advertises (in range or not): its model has
  /// started and not switched advertising off. `false` for one not hosted.
  public func isAdvertising(_ peripheral: PeripheralID) -> Bool {
    state.withLock { state in state.hosted(peripheral).map { $0.started && $0.advertising } ?? false }
  }

  /// Loses every link to a peripheral at once, as a supervision timeout would:
  /// both sides see `.linkLoss`. Returns once the model has heard of it.
  public func loseLinks(to peripheral: PeripheralID) async {
    await closeLinks(to: peripheral, andSetInRange: nil)
  }

  /// Moves a peripheral out of range or back. Out of range, it is not reported
  /// by scans, its links are lost (`.linkLoss` on both sides), and connection
  /// attempts wait; back in range, scans that have not reported it yet do, and
  /// waiting connection attempts connect.
  public func setInRange(_ inRange: Bool, _ peripheral: PeripheralID) async {
    await closeLinks(to: peripheral, andSetInRange: inRange)
  }

  /// Starts or stops a peripheral's advertising, optionally with new
  /// advertisement data. Not advertising, it is not reported by scans and
  /// connection attempts wait (as with a real peripheral, which only accepts a
  /// connection on a connectable advertisement); its links stay up. Advertising
  /// again, scans that have not reported it yet do, and waiting attempts connect.
  public func setAdvertising(
    _ advertising: Bool, _ peripheral: PeripheralID, advertisement: AdvertisementData? = nil
  ) async throws(GATTError) {
    try setAdvertising(advertising, peripheral, advertisement: advertisement, generation: nil)
  }

  /// `setAdvertising(_:_:advertisement:)` for one hosting of `peripheral`
  /// (any, when `generation` is `nil`): the host of an earlier hosting,
  /// still held by a model's task, does not switch the new one's advertising.
  func setAdvertising(
    _ advertising: Bool, _ peripheral: PeripheralID, advertisement: AdvertisementData? = nil, generation: UInt64?
  ) throws(GATTError) {
    if let advertisement {
      do {
        _ = try advertisement.legacyLayout()
      } catch {
        throw GATTError(.invalidArgument, "cannot advertise: \(error)")
      }
    }
    let deferred: [LoopbackAirState.Deferred] = state.withLock { state in
      guard let index = state.peripherals.firstIndex(where: { $0.id == peripheral }),
        generation.map({ $0 == state.peripherals[index].generation }) ?? true
      else { return [] }
      state.peripherals[index].advertising = advertising
      if let advertisement { state.peripherals[index].advertisement = advertisement }
      let hosted = state.peripherals[index]
      guard hosted.reachable else { return [] }
      state.announce(hosted)
      return state.connectPending(to: hosted)
    }
    for work in deferred { work() }
  }

  private func closeLinks(to peripheral: PeripheralID, andSetInRange inRange: Bool?) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      let deferred: [LoopbackAirState.Deferred] = state.withLock { state in
        guard let index = state.peripherals.firstIndex(where: { $0.id == peripheral }) else {
          return [{ done.resume() }]
        }
        var deferred: [LoopbackAirState.Deferred] = []
        if let inRange {
          state.peripherals[index].inRange = inRange
        }
        let hosted = state.peripherals[index]
        if inRange != true {
          for link in state.openLinks(to: peripheral, generation: hosted.generation) {
            deferred += state.closeLink(
              link.serial, centralReason: .linkLoss, peripheralReason: .linkLoss)
          }
        }
        if inRange == true, hosted.reachable {
          state.announce(hosted)
          deferred += state.connectPending(to: hosted)
        }
        hosted.events.enqueue { done.resume() }
        return deferred
      }
      for work in deferred { work() }
    }
  }

  static func validate(mtu: Int) throws(GATTError) {
    guard (defaultMTU...maximumMTU).contains(mtu) else {
      throw GATTError(.invalidArgument, "ATT MTU \(mtu) is outside \(defaultMTU)...\(maximumMTU)")
    }
  }
}
