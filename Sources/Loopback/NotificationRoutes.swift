import GATT

/// Where a hosted peripheral's notifications go, remembered per
/// characteristic while the air's peripherals and links stay as they were
/// (the same `LoopbackAirState.epoch`): working it out means walking every
/// link and the profile, and a loopback run sends millions of
/// notifications between two changes of links.
///
/// Used only under the air's lock.
final class NotificationRoutes: @unchecked Sendable {
  /// The listeners of one characteristic's notifications or indications.
  /// A class: a send takes it out of the air's lock with one retain, where
  /// a struct's copy retained each of its listeners and its refusal.
  final class Route: Sendable {
    let characteristic: CharacteristicAddress
    let kind: CharacteristicProperties
    /// The smallest ATT_MTU of the subscribed links: a longer value must be
    /// checked against each, the slow way.
    let smallestMTU: Int
    /// The listeners in link order, the first without an array.
    let first: NotificationStream.Continuation?
    let others: [NotificationStream.Continuation]
    /// Why a value goes to nobody (no central is subscribed), made once: a
    /// model streams on whether or not anyone listens, and building the
    /// error's text for each value cost more than sending one.
    let refusal: GATTError?

    init(
      characteristic: CharacteristicAddress, kind: CharacteristicProperties, smallestMTU: Int,
      first: NotificationStream.Continuation?, others: [NotificationStream.Continuation], refusal: GATTError?
    ) {
      self.characteristic = characteristic
      self.kind = kind
      self.smallestMTU = smallestMTU
      self.first = first
      self.others = others
      self.refusal = refusal
    }
  }

  private var epoch: UInt64 = 0
  private var routes: [Route] = []

  /// The route remembered for `characteristic` and `kind`, if the links
  /// have not changed since (`epoch`).
  func route(_ characteristic: CharacteristicAddress, _ kind: CharacteristicProperties, epoch: UInt64) -> Route? {
    guard epoch == self.epoch else { return nil }
    for route in routes where route.characteristic == characteristic && route.kind == kind { return route }
    return nil
  }

  /// Remembers `route`, found under `epoch`; routes of an earlier epoch are forgotten.
  func remember(_ route: Route, epoch: UInt64) {
    if epoch != self.epoch {
      self.epoch = epoch
      routes.removeAll(keepingCapacity: true)
    }
    routes.removeAll { $0.characteristic == route.characteristic && $0.kind == route.kind }
    routes.append(route)
  }
}
