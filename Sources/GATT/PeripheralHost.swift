/// What a device model sees of the transport that hosts it (BlueZ, or the
/// loopback): sending values to subscribed centrals, the connected centrals,
/// and the clock.
public protocol PeripheralHost: Sendable {
  /// The clock for all of the model's timing: wall time on BlueZ, virtual time
  /// on the loopback. Open it as `some Clock<Duration>` to use instants, e.g.
  /// for drift-free periodic deadlines with `sleep(until:)`.
  var clock: any Clock<Duration> { get }

  /// Sends a notification to every central subscribed to `characteristic`.
  ///
  /// Throws `notFound` for a characteristic not in the profile, `notSupported`
  /// when it lacks the notify property, `noSubscribers` when no central is
  /// subscribed, and `valueTooLong` when the value exceeds ATT_MTU − 3 of any
  /// subscriber (then it is sent to none).
  nonisolated(nonsending) func notify(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError)

  /// Sends a notification as `notify` does, but without suspending, when
  /// this host can: `true` once sent (throwing as `notify` throws), `false`
  /// when it cannot now and the model must `notify` instead (the default).
  /// The loopback's host hands a value to its subscribers' streams within
  /// the call; BlueZ's writes it to the characteristic's notification
  /// socket when one is in use and has room. A model saves the switches of
  /// executor around each `await`.
  func notifyAtOnce(_ value: [UInt8], characteristic: CharacteristicAddress) throws(GATTError) -> Bool

  /// Sends an indication to every central subscribed to `characteristic` and
  /// returns when all have confirmed it. Throws as `notify` does (needing the
  /// indicate property), and `disconnected` when a central left before confirming.
  nonisolated(nonsending) func indicate(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError)

  /// The centrals subscribed to `characteristic`, in the order they subscribed.
  func subscribers(of characteristic: CharacteristicAddress) async -> [CentralID]

  /// The connected centrals, in the order they connected.
  var connectedCentrals: [CentralID] { get async }

  /// The ATT MTU of a central's connection; `nil` when it is not connected.
  func mtu(for central: CentralID) async -> Int?

  /// Ends the connection to a central from the peripheral side. The central
  /// sees `.remote`; the model gets `centralDisconnected(_:reason: .local)`
  /// after this returns (never during it).
  func disconnect(_ central: CentralID) async

  /// Starts or stops advertising the model's advertisement, as firmware does
  /// when the device switches off (it stops advertising before it drops its
  /// links, so no central finds it in between) or on again. Links stay up.
  /// A host that cannot change its advertising logs why.
  func setAdvertisingEnabled(_ enabled: Bool) async

  /// Notes something the firmware understood the central to do — a command,
  /// a script and the firmware's verdict on it, a request — by a name from
  /// the model's own vocabulary (`start-streaming`, `script`, …). Scenario
  /// runs record these as device-side observations (`firmware-event`
  /// expectations); a host that records nothing ignores them.
  func firmwareEvent(_ name: String, detail: String)

  /// Returns once the centrals' side has taken every notification sent so
  /// far, or after a bound (10 s over BlueZ, with a warning). A model whose centrals
  /// rely on the order of notifications across characteristics (muselsl
  /// files a Muse's EEG when AF7, sent last, arrives) calls it between the
  /// ones that must not overtake each other: over BlueZ each characteristic
  /// has a socket of its own, and bluetoothd reads the ready ones in its own
  /// order. A host that delivers in order needs nothing (the default).
  nonisolated(nonsending) func notificationsTaken() async

  /// Whether every notification reaches the centrals in the order sent,
  /// across characteristics, so that `notificationsTaken()` has nothing to
  /// wait for (the loopback's host; not BlueZ's, the default).
  var deliversInOrder: Bool { get }
}

extension PeripheralHost {
  public func firmwareEvent(_ name: String, detail: String) {}
  nonisolated(nonsending) public func notificationsTaken() async {}
  public func notifyAtOnce(_ value: [UInt8], characteristic: CharacteristicAddress) throws(GATTError) -> Bool { false }

  /// `notifyAtOnce` for a model that lets a value nobody takes go, as on
  /// air (no subscriber, the link gone): `false` only when the host cannot
  /// send it now and the model must await `notify`.
  public func notifyAtOnceOrDrop(_ value: [UInt8], characteristic: CharacteristicAddress) -> Bool {
    do { return try notifyAtOnce(value, characteristic: characteristic) } catch { return true }
  }
  public var deliversInOrder: Bool { false }
}
