/// An emulated device ("firmware"): a GATT profile, an advertisement, and
/// behaviour, hosted on a transport through a `PeripheralHost`.
///
/// Shaped like firmware callbacks or `CBPeripheralManagerDelegate`: the host
/// calls the model for each event, one at a time and in the order they
/// happened on the link, awaiting each call before the next. A model is
/// typically an actor; `profile` and `advertisement` are read synchronously,
/// so an actor declares them `nonisolated`.
///
/// All timing must use `host.clock`, so the same model runs in wall time on
/// BlueZ and in virtual time on the loopback. A callback should return
/// promptly; long-running work (streaming) belongs in a task the model
/// starts and cancels itself.
public protocol PeripheralModel: Sendable {
  /// The GATT database the host publishes.
  var profile: GATTProfile { get }
  /// What the host advertises.
  var advertisement: AdvertisementData { get }

  /// Hosting begins. Keep `host` to notify, indicate, disconnect and read the clock.
  func start(host: any PeripheralHost) async
  /// Hosting ends; cancel any tasks. Nothing is called after this.
  func stop() async
  /// A central connected.
  func centralConnected(_ central: CentralID) async
  /// A central disconnected: `.remote` when the central ended it, `.local` when
  /// the model did (`PeripheralHost.disconnect`), `.linkLoss` when the link was lost.
  /// Its subscriptions have ended before this is called.
  func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async
  /// The ATT MTU of a central's connection changed.
  func mtuChanged(_ mtu: Int, central: CentralID) async
  /// A central enabled or disabled notifications or indications (wrote the CCCD).
  func subscriptionChanged(
    characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool) async
  /// A central reads a characteristic. Return the value from `offset` on (the
  /// host sends at most ATT_MTU − 1 bytes and reads on at a larger offset when
  /// the answer filled a packet); throw to answer with an ATT error.
  func read(characteristic: CharacteristicAddress, offset: Int, central: CentralID)
    async throws(ATTError) -> [UInt8]
  /// A central writes a characteristic. Throw to refuse a write with response;
  /// for a write without response the error goes nowhere, as on air.
  func write(
    characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID)
    async throws(ATTError)
  /// Something happened to the hosting stack itself (``HostEvent``): after
  /// `.stackLost` every central has been reported disconnected.
  func hostEvent(_ event: HostEvent) async
  /// Returns once the model has sent what its timeline made due by now
  /// (within a bound of its own), and sends nothing sampled after that (silence or a switch-off
  /// follows): a model that waits for its host before sending more (as the
  /// Muse does, for the order of its EEG sets) may be behind when a run ends
  /// over a busy stack. By default it returns at once.
  func catchUp() async
}

extension PeripheralModel {
  public func start(host: any PeripheralHost) async {}
  public func hostEvent(_ event: HostEvent) async {}
  public func stop() async {}
  public func catchUp() async {}
  public func centralConnected(_ central: CentralID) async {}
  public func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async {}
  public func mtuChanged(_ mtu: Int, central: CentralID) async {}
  public func subscriptionChanged(
    characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool
  ) async {}

  /// Serves the characteristic's `initialValue` from `offset`; refuses with
  /// `readNotPermitted` when it has none, `invalidOffset` past its end.
  public func read(characteristic: CharacteristicAddress, offset: Int, central: CentralID)
    async throws(ATTError)
    -> [UInt8]
  {
    guard let value = profile.characteristic(at: characteristic)?.initialValue else {
      throw .readNotPermitted
    }
    guard offset <= value.count else { throw .invalidOffset }
    return Array(value[offset...])
  }

  /// Refuses every write with `writeNotPermitted`.
  public func write(
    characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID
  )
    async throws(ATTError)
  {
    throw .writeNotPermitted
  }
}
