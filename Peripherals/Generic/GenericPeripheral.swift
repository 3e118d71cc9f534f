import GATT

/// A device described entirely by data: a GATT profile with static values,
/// an advertisement, notification payloads replayed at their recorded times,
/// and rules that answer writes. It is what `doppel import` turns a capture
/// into, and what a scenario declares for a device Doppel has no model for.
///
/// Reads serve each characteristic's declared value. A write is matched
/// against the rules of its characteristic in order; the first that matches
/// answers (notifications after their delays, or an ATT error), and a write
/// no rule matches is accepted. Each write is reported as the firmware
/// event `write` (`KEY HEX`), each value a replay could not send because no
/// central was subscribed as `replay-skipped` (but for a replay tied to the
/// link, once the link has gone).
public actor GenericPeripheral: PeripheralModel {
  public nonisolated let profile: GATTProfile
  public nonisolated let advertisement: AdvertisementData
  public nonisolated let replays: [NotificationReplay]
  public nonisolated let rules: [WriteRule]

  private var host: (any PeripheralHost)?
  private var running: [Int: Task<Void, Never>] = [:]
  private var answers: [Task<Void, Never>] = []
  /// Values replays have sent, and those they skipped (nobody subscribed).
  public private(set) var sent = 0
  public private(set) var skipped = 0
  /// What centrals wrote, in order.
  public private(set) var writes: [(characteristic: CharacteristicAddress, value: [UInt8])] = []

  public init(
    profile: GATTProfile, advertisement: AdvertisementData, replays: [NotificationReplay] = [],
    rules: [WriteRule] = []
  ) {
    self.profile = profile
    self.advertisement = advertisement
    self.replays = replays
    self.rules = rules
  }

  /// The profile a `generic` device has when nothing declares one: Device
  /// Information with its manufacturer name, so it can still be hosted and listed.
  public static let placeholderProfile: GATTProfile = try! GATTProfile([
    ServiceDefinition(
      BluetoothUUID(0x180A), name: "Device Information",
      characteristics: [
        CharacteristicDefinition(
          BluetoothUUID(0x2A29), name: "Manufacturer Name", properties: [.read], initialValue: Array("Doppel".utf8))
      ])
  ])

  public func start(host: any PeripheralHost) async {
    self.host = host
    for (index, replay) in replays.enumerated() where replay.anchor == .hosting { begin(index) }
  }

  public func stop() async {
    for task in running.values { task.cancel() }
    running = [:]
    for task in answers { task.cancel() }
    answers = []
  }

  public func centralConnected(_ central: CentralID) async {
    for (index, replay) in replays.enumerated() where replay.anchor == .connected && running[index] == nil {
      begin(index)
    }
  }

  public func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async {
    guard let host, await host.connectedCentrals.isEmpty else { return }
    // The link is gone: replays tied to it start over with the next one.
    for (index, replay) in replays.enumerated() where replay.anchor != .hosting {
      running[index]?.cancel()
      running[index] = nil
    }
  }

  public func subscriptionChanged(characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool) async {
    guard subscribed else { return }
    for (index, replay) in replays.enumerated()
    where replay.anchor == .subscribed && running[index] == nil
      && replay.entries.first?.characteristic == characteristic
    {
      begin(index)
    }
  }

  public func write(characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID)
    async throws(ATTError)
  {
    writes.append((characteristic, value))
    host?.firmwareEvent("write", detail: "\(key(characteristic)) \(WriteRule.hex(value))")
    guard let rule = rules.first(where: { $0.matches(value, on: characteristic) }) else { return }
    switch rule.answer {
    case .error(let error):
      throw error
    case .replies(let replies):
      guard let host else { return }
      answers.removeAll { $0.isCancelled }
      answers.append(
        Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
          await self?.answer(replies, clock: host.clock)
        })
    }
  }

  private func answer(_ replies: [WriteRule.Reply], clock: some Clock<Duration>) async {
    let start = clock.now
    for reply in replies {
      do { try await clock.sleep(until: start.advanced(by: reply.delay), tolerance: nil) } catch { return }
      await send(reply.value, on: reply.characteristic)
    }
  }

  private func begin(_ index: Int) {
    guard let host else { return }
    let replay = replays[index]
    running[index] = Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
      await self?.play(replay, clock: host.clock)
    }
  }

  private func play(_ replay: NotificationReplay, clock: some Clock<Duration>) async {
    let start = clock.now
    var offset = Duration.zero
    var previous: CharacteristicAddress?
    repeat {
      for entry in replay.entries {
        do { try await clock.sleep(until: start.advanced(by: offset + entry.time), tolerance: nil) } catch { return }
        // A recording is in the order the central received it. Over BlueZ
        // each characteristic has a socket of its own, and bluetoothd may read
        // a later one first when two values go out together (the same
        // timestamp in a capture): the value before must have been taken.
        if let previous, previous != entry.characteristic {
          await host?.notificationsTaken()
          // The link may have gone, or the device stopped, meanwhile.
          guard !Task.isCancelled else { return }
        }
        previous = entry.characteristic
        await send(entry.value, on: entry.characteristic, endsWithLink: replay.anchor != .hosting)
      }
      offset += replay.period
    } while replay.loops && !Task.isCancelled && !replay.entries.isEmpty
  }

  /// Notifies `value`, or indicates it when the characteristic only indicates.
  /// `endsWithLink`: the value belongs to a replay tied to the link, which
  /// ends with it; one that finds no central connected any more is not
  /// skipped (the device hears of the link's end a moment after its host).
  private func send(_ value: [UInt8], on characteristic: CharacteristicAddress, endsWithLink: Bool = false) async {
    guard let host, let definition = profile.characteristic(at: characteristic) else { return }
    do {
      if definition.properties.contains(.notify) {
        try await host.notify(value, characteristic: characteristic)
      } else {
        try await host.indicate(value, characteristic: characteristic)
      }
      sent += 1
    } catch {
      if endsWithLink, await host.connectedCentrals.isEmpty { return }
      skipped += 1
      host.firmwareEvent("replay-skipped", detail: "\(key(characteristic)): \(error)")
    }
  }

  /// The characteristic's key as scenarios write it (`Battery Level` → `battery-level`).
  private func key(_ address: CharacteristicAddress) -> String {
    guard let name = profile.characteristic(at: address)?.name, !name.isEmpty else {
      return address.characteristic.uuidString
    }
    return name.lowercased().split(whereSeparator: { $0 == " " || $0 == "_" }).joined(separator: "-")
  }
}
