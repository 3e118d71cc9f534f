import GATT
import Synchronization

/// What a hosted device saw its centrals do during a run — the device-side
/// observations that `central-*`, `no-att-errors` and `firmware-event`
/// expectations check. Recorded at the model's side of the `PeripheralHost`
/// seam, so it is the same over BlueZ and in the loopback, whoever the
/// central is (Doppel's own client stacks, or any program under `doppel test`).
///
/// Times are seconds from the start of the run on the run's clock.
/// Characteristics are named by their key (see ``GATTProfile/characteristicKey(at:)``).
public struct CentralActivity: Sendable {
  /// One connection of a central.
  public struct Connection: Sendable, Hashable {
    /// The central's identity on the transport (a Bluetooth address over BlueZ).
    public var central: String
    public var connectedAt: Double
    public var disconnectedAt: Double?
    /// Who ended it: `remote` (the central), `local` (the device or a scenario
    /// fault), `linkLoss`; `nil` while connected.
    public var endedBy: DisconnectReason?
    /// When the link was down for the central too, for a link the device
    /// ended: the device lets go at once (`disconnectedAt`), but bluetoothd
    /// ends the link only after its disconnect timer (2 s, 4 s seen in a
    /// loaded lab). `nil` when the same as `disconnectedAt` (the loopback)
    /// or not known.
    public var linkEndedAt: Double?

    /// When the central lost the link: from here it can connect again.
    public var droppedAt: Double? { linkEndedAt ?? disconnectedAt }
    /// The ATT MTU last negotiated on it.
    public var mtu: Int?
  }

  /// A central turned notifications or indications on or off.
  public struct Subscription: Sendable, Hashable {
    public var characteristic: String
    public var subscribed: Bool
    public var at: Double
  }

  /// A read or a write by a central, and the ATT error the device answered, if any.
  public struct Access: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
      case read
      case write = "write"
      case writeWithoutResponse = "write-without-response"
    }
    public var kind: Kind
    public var characteristic: String
    /// The bytes written (empty for a read).
    public var bytes: [UInt8]
    public var at: Double
    /// The ATT error the device answered with; `nil` when it succeeded.
    public var error: ATTError?
  }

  /// Something the firmware understood (a command, a script and its verdict, a request).
  public struct FirmwareEvent: Sendable, Hashable {
    public var name: String
    public var detail: String
    public var at: Double
  }

  public var connections: [Connection] = []
  public var subscriptions: [Subscription] = []
  /// Reads and writes, in order (the first `CentralActivity.accessLimit`).
  public var accesses: [Access] = []
  /// Accesses past the limit, counted only.
  public var moreAccesses = 0
  public var firmwareEvents: [FirmwareEvent] = []
  /// When the scenario ended the link from the device's side (a `disconnect` fault).
  public var faultDisconnects: [Double] = []
  /// What happened to the hosting stack (bluetoothd went away, came back), with when.
  public var hostEvents: [(at: Double, event: HostEvent)] = []

  /// The most reads and writes kept one by one.
  public static let accessLimit = 20_000

  public init() {}

  /// The answers with an ATT error, in order.
  public var attErrors: [Access] { accesses.filter { $0.error != nil } }

  /// Whether `characteristic` is subscribed by some central at the end of the record.
  public func isSubscribed(_ characteristic: String) -> Bool {
    subscriptions.last { $0.characteristic == characteristic }?.subscribed ?? false
  }
}

/// Keeps a device's ``CentralActivity`` as it happens, under a lock.
final class CentralActivityRecorder: Sendable {
  private let activity = Mutex(CentralActivity())
  private let elapsed: @Sendable () -> Double

  /// - Parameter elapsed: seconds since the start of the run.
  init(elapsed: @escaping @Sendable () -> Double) {
    self.elapsed = elapsed
  }

  var snapshot: CentralActivity { activity.withLock { $0 } }

  func connected(_ central: CentralID) {
    let now = elapsed()
    activity.withLock {
      $0.connections.append(CentralActivity.Connection(central: "\(central)", connectedAt: now))
    }
  }

  func disconnected(_ central: CentralID, reason: DisconnectReason) {
    let now = elapsed()
    let name = "\(central)"
    activity.withLock { activity in
      guard let index = activity.connections.lastIndex(where: { $0.central == name && $0.disconnectedAt == nil })
      else { return }
      activity.connections[index].disconnectedAt = now
      activity.connections[index].endedBy = reason
      // Its subscriptions ended with it.
      var open: [String] = []
      for subscription in activity.subscriptions {
        if subscription.subscribed {
          if !open.contains(subscription.characteristic) { open.append(subscription.characteristic) }
        } else {
          open.removeAll { $0 == subscription.characteristic }
        }
      }
      if activity.connections.allSatisfy({ $0.disconnectedAt != nil }) {
        for characteristic in open {
          activity.subscriptions.append(
            CentralActivity.Subscription(characteristic: characteristic, subscribed: false, at: now))
        }
      }
    }
  }

  func mtu(_ mtu: Int, central: CentralID) {
    let name = "\(central)"
    activity.withLock { activity in
      if let index = activity.connections.lastIndex(where: { $0.central == name }) {
        activity.connections[index].mtu = mtu
      }
    }
  }

  func subscription(_ characteristic: String, subscribed: Bool) {
    let now = elapsed()
    activity.withLock {
      $0.subscriptions.append(
        CentralActivity.Subscription(characteristic: characteristic, subscribed: subscribed, at: now))
    }
  }

  func access(_ kind: CentralActivity.Access.Kind, _ characteristic: String, bytes: [UInt8], error: ATTError?) {
    let now = elapsed()
    activity.withLock { activity in
      guard activity.accesses.count < CentralActivity.accessLimit else {
        activity.moreAccesses += 1
        return
      }
      activity.accesses.append(
        CentralActivity.Access(kind: kind, characteristic: characteristic, bytes: bytes, at: now, error: error))
    }
  }

  func firmwareEvent(_ name: String, detail: String) {
    let now = elapsed()
    activity.withLock {
      $0.firmwareEvents.append(CentralActivity.FirmwareEvent(name: name, detail: detail, at: now))
    }
  }

  /// The device's disconnect of `central` returned: the link is down on the
  /// central's side too. Kept only when later than the device's own end, and
  /// never later than the central's next connection (a disconnect whose
  /// answer was lost returns at its timeout).
  func linkEnded(_ central: CentralID) {
    let now = elapsed()
    let name = "\(central)"
    activity.withLock { activity in
      guard
        let index = activity.connections.lastIndex(where: { $0.central == name && $0.disconnectedAt != nil }),
        let ended = activity.connections[index].disconnectedAt, now > ended + 0.001
      else { return }
      let next = activity.connections[(index + 1)...].first { $0.central == name }?.connectedAt
      activity.connections[index].linkEndedAt = min(now, next ?? now)
    }
  }

  func faultDisconnect() {
    let now = elapsed()
    activity.withLock { $0.faultDisconnects.append(now) }
  }

  func hostEvent(_ event: HostEvent) {
    let now = elapsed()
    activity.withLock { $0.hostEvents.append((now, event)) }
  }
}

extension GATTProfile {
  /// How scenarios name the characteristic at `address`: its name in the
  /// profile, lower-case, spaces as dashes (`UART TX` → `uart-tx`); its UUID
  /// when it has no name.
  public func characteristicKey(at address: CharacteristicAddress) -> String {
    guard let name = characteristic(at: address)?.name, !name.isEmpty else {
      return address.characteristic.uuidString
    }
    return Self.key(name)
  }

  /// Every characteristic's key, in profile order.
  public var characteristicKeys: [String] {
    services.flatMap { service in
      service.characteristics.map { $0.name.isEmpty ? $0.uuid.uuidString : Self.key($0.name) }
    }
  }

  static func key(_ name: String) -> String {
    name.lowercased().split(whereSeparator: { $0 == " " || $0 == "_" }).joined(separator: "-")
  }
}
