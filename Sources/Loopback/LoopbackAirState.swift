import GATT
import Logging

/// Everything the loopback air knows, guarded by the air's lock: hosted
/// peripherals, links, scans, pending connections.
///
/// Every change of state happens here, under the lock, at the moment an
/// operation is issued; model callbacks are enqueued in that same order, and
/// stream continuations are finished only after the lock is released.
struct LoopbackAirState {
  typealias Deferred = @Sendable () -> Void

  struct Hosted {
    let id: PeripheralID
    let generation: UInt64
    let model: any PeripheralModel
    let profile: GATTProfile
    var advertisement: AdvertisementData
    let rssi: Int
    let preferredMTU: Int
    var inRange: Bool
    /// Whether it advertises (connectable): scans report it and connections reach it only then.
    var advertising = true
    /// Whether its model's `start(host:)` has returned: it goes on the air only then.
    var started = false
    /// Started, in range and advertising: scans see it, connection attempts reach it.
    var reachable: Bool { started && inRange && advertising }
    let events: PeripheralEventQueue
  }

  struct Listener {
    let id: UInt64
    let characteristic: CharacteristicAddress
    let continuation: NotificationStream.Continuation
  }

  struct Observer {
    let id: UInt64
    let continuation: AsyncStream<ConnectionEvent>.Continuation
  }

  struct Link {
    let serial: UInt64
    let central: CentralID
    let peripheral: PeripheralID
    let generation: UInt64
    let mtu: Int
    /// Why it ended, as the central sees it; `nil` while open.
    var closedReason: DisconnectReason?
    /// The peripheral's view: characteristics this central subscribed to, in order.
    var subscriptions: [CharacteristicAddress] = []
    /// The central's view: open notification streams, in the order they were opened.
    var listeners: [Listener] = []
    var observers: [Observer] = []

    var isOpen: Bool { closedReason == nil }
  }

  struct Scan {
    let id: UInt64
    let filter: ScanFilter
    let continuation: AsyncStream<DiscoveredPeripheral>.Continuation
    var reported: Set<PeripheralID> = []
  }

  struct PendingConnection {
    let id: UInt64
    let central: CentralID
    let centralMTU: Int
    let peripheral: PeripheralID
    let continuation: CheckedContinuation<Result<UInt64, GATTError>, Never>
    var timeout: Task<Void, Never>?
  }

  var peripherals: [Hosted] = [] { didSet { epoch &+= 1 } }
  var centrals: [CentralID] = []
  var links: [UInt64: Link] = [:] { didSet { epoch &+= 1 } }
  /// Moves on with every change to `peripherals` or `links`: what was
  /// worked out from them under an epoch (`NotificationRoutes`) holds while
  /// it stays the same.
  private(set) var epoch: UInt64 = 0
  var scans: [Scan] = []
  var pendingConnections: [PendingConnection] = []
  private var lastSerial: UInt64 = 0
  private var peripheralsEverHosted = 0
  private var centralsEverMade = 0

  mutating func makeSerial() -> UInt64 {
    lastSerial += 1
    return lastSerial
  }

  mutating func makePeripheralAddress() -> PeripheralID {
    peripheralsEverHosted += 1
    return PeripheralID(Self.address(prefix: 0xD0, number: peripheralsEverHosted))
  }

  mutating func makeCentralAddress() -> CentralID {
    centralsEverMade += 1
    return CentralID(Self.address(prefix: 0xC0, number: centralsEverMade))
  }

  private static func address(prefix: UInt8, number: Int) -> String {
    let bytes = [
      prefix, 0x0A, 0x1B, UInt8(truncatingIfNeeded: number >> 16),
      UInt8(truncatingIfNeeded: number >> 8), UInt8(truncatingIfNeeded: number),
    ]
    return bytes.map { byte in
      let digits = String(byte, radix: 16, uppercase: true)
      return digits.count == 1 ? "0" + digits : digits
    }.joined(separator: ":")
  }

  func hosted(_ id: PeripheralID) -> Hosted? {
    peripherals.first { $0.id == id }
  }

  /// The hosted peripheral of an open link, when it is the same hosting.
  func hosted(for link: Link) -> Hosted? {
    guard let hosted = hosted(link.peripheral), hosted.generation == link.generation else {
      return nil
    }
    return hosted
  }

  /// Open links to a peripheral, oldest first.
  func openLinks(to peripheral: PeripheralID, generation: UInt64) -> [Link] {
    links.values
      .filter { $0.isOpen && $0.peripheral == peripheral && $0.generation == generation }
      .sorted { $0.serial < $1.serial }
  }

  func openLink(from central: CentralID, to peripheral: PeripheralID) -> Link? {
    links.values.first { $0.isOpen && $0.central == central && $0.peripheral == peripheral }
  }

  /// Opens a link and enqueues the model's connection callbacks; `established`
  /// runs after the model has processed them.
  mutating func establishLink(
    from central: CentralID, centralMTU: Int, to hosted: Hosted,
    established: @escaping @Sendable (UInt64) -> Void
  ) -> UInt64 {
    let serial = makeSerial()
    let mtu = max(LoopbackAir.defaultMTU, min(centralMTU, hosted.preferredMTU))
    Logger.gatt.debug(
      "loopback link up", metadata: ["central": "\(central)", "peripheral": "\(hosted.id)", "mtu": "\(mtu)"])
    links[serial] = Link(
      serial: serial, central: central, peripheral: hosted.id, generation: hosted.generation,
      mtu: mtu)
    let model = hosted.model
    hosted.events.enqueue {
      await model.centralConnected(central)
      if mtu != LoopbackAir.defaultMTU {
        await model.mtuChanged(mtu, central: central)
      }
      established(serial)
    }
    return serial
  }

  /// Closes a link: the central's streams end, the model hears of the ended
  /// subscriptions and then of the disconnection. Returns the work to do once
  /// the lock is released; `completion` runs after the model's callbacks.
  mutating func closeLink(
    _ serial: UInt64,
    centralReason: DisconnectReason,
    peripheralReason: DisconnectReason,
    completion: Deferred? = nil
  ) -> [Deferred] {
    guard var link = links[serial], link.isOpen else { return completion.map { [$0] } ?? [] }
    link.closedReason = centralReason
    Logger.gatt.debug(
      "loopback link down",
      metadata: [
        "central": "\(link.central)", "peripheral": "\(link.peripheral)", "reason": "\(peripheralReason)",
      ])
    let subscriptions = link.subscriptions
    let listeners = link.listeners
    let observers = link.observers
    link.subscriptions = []
    link.listeners = []
    link.observers = []
    links[serial] = link

    var deferred: [Deferred] = []
    if let hosted = hosted(for: link) {
      let model = hosted.model
      let central = link.central
      hosted.events.enqueue {
        for characteristic in subscriptions {
          await model.subscriptionChanged(
            characteristic: characteristic, central: central, subscribed: false)
        }
        await model.centralDisconnected(central, reason: peripheralReason)
        completion?()
      }
    } else if let completion {
      deferred.append(completion)
    }
    let streamError: GATTError? =
      centralReason == .local
      ? nil
      : GATTError(.disconnected(centralReason), "\(link.peripheral): \(centralReason)")
    for listener in listeners {
      deferred.append { listener.continuation.finish(throwing: streamError) }
    }
    for observer in observers {
      deferred.append {
        observer.continuation.yield(.disconnected(centralReason))
        observer.continuation.finish()
      }
    }
    return deferred
  }

  /// Reports a peripheral to every scan that matches it and has not reported it yet.
  mutating func announce(_ hosted: Hosted) {
    guard hosted.reachable else { return }
    let discovered = DiscoveredPeripheral(
      id: hosted.id, rssi: hosted.rssi, advertisement: hosted.advertisement)
    for index in scans.indices
    where scans[index].filter.matches(hosted.advertisement)
      && !scans[index].reported.contains(hosted.id)
    {
      scans[index].reported.insert(hosted.id)
      scans[index].continuation.yield(discovered)
    }
  }

  /// Connects the pending connections to a peripheral that came into range.
  mutating func connectPending(to hosted: Hosted) -> [Deferred] {
    var deferred: [Deferred] = []
    let waiting = pendingConnections.filter { $0.peripheral == hosted.id }
    pendingConnections.removeAll { $0.peripheral == hosted.id }
    for pending in waiting {
      pending.timeout?.cancel()
      if let link = openLink(from: pending.central, to: hosted.id) {
        deferred.append { pending.continuation.resume(returning: .success(link.serial)) }
        continue
      }
      _ = establishLink(from: pending.central, centralMTU: pending.centralMTU, to: hosted) {
        serial in
        pending.continuation.resume(returning: .success(serial))
      }
    }
    return deferred
  }
}
