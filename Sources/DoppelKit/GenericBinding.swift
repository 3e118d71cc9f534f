import GATT
import Generic
import Scenario
import Signals

/// The `generic` model in scenarios: a device declared by its profile (in
/// the scenario, or a profile file it names) — GATT database, advertising
/// data, recorded notifications replayed at their times, answers to writes —
/// as `doppel import` writes one from a capture. Its client is a plain GATT
/// central: it connects, subscribes to every characteristic of the profile that notifies or
/// indicates, reports each value as a `notification` event, and, given a
/// recording of a central's writes, writes them again at their times.
public struct GenericBinding: DeviceBinding {
  static let connectTimeout = Setting.duration(
    "connect-timeout", default: .seconds(60), help: "how long to scan and connect")
  static let reconnect = Setting.flag("reconnect", default: true, help: "connect again after a disconnect")
  static let writes = Setting.optionalText(
    "writes",
    help:
      "a recording of a central's writes (time,characteristic,value,type,answer, as doppel import writes it):"
      + " the client writes each at its time from its first subscription")

  public static let description = DeviceDescription(
    model: "generic",
    summary:
      "a device declared by its profile (services, advertising, recorded notifications, answers to writes); "
      + "without one, Device Information only",
    clientSettings: [connectTimeout.spec, reconnect.spec, writes.spec],
    events: ["notification"],
    firmwareEvents: ["write", "replay-skipped"],
    declaresProfile: true)

  public let device: DeviceSpec
  let peripheral: GenericPeripheral
  /// What the client writes, from its first subscription.
  let centralWrites: [WriteRecording.Entry]

  public var model: any PeripheralModel { peripheral }

  public init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError) {
    self.device = device
    guard let declaration = device.profile else {
      centralWrites = []
      peripheral = GenericPeripheral(
        profile: GenericPeripheral.placeholderProfile,
        advertisement: AdvertisementData(localName: device.name ?? "Doppel"))
      return
    }
    var advertisement = declaration.advertisement
    if let name = device.name { advertisement.localName = name }
    let replays = declaration.replays.map { replay in
      NotificationReplay(
        entries: replay.entries.map { .init(time: $0.time, characteristic: $0.characteristic, value: $0.value) },
        anchor: NotificationReplay.Anchor(rawValue: replay.anchor) ?? .connected, loops: replay.loops)
    }
    let rules = declaration.responses.map { response in
      let match: WriteRule.Match =
        if let bytes = response.bytes { .bytes(bytes) } else if let pattern = response.pattern {
          .pattern(pattern)
        } else { .any }
      let answer: WriteRule.Answer =
        if let code = response.error { .error(ATTError(code: code)) } else {
          .replies(
            response.replies.map { .init(characteristic: $0.characteristic, value: $0.value, delay: $0.delay) })
        }
      return WriteRule(characteristic: response.characteristic, match: match, answer: answer)
    }
    peripheral = GenericPeripheral(
      profile: declaration.gatt, advertisement: advertisement, replays: replays, rules: rules)
    if let file = device.client[Self.writes] {
      let gatt = declaration.gatt
      let writable = gatt.characteristicAddresses.filter { address in
        let properties = gatt.characteristic(at: address)?.properties ?? []
        return properties.contains(.write) || properties.contains(.writeWithoutResponse)
      }
      let keys = writable.map { gatt.characteristicKey(at: $0) }
      centralWrites = try WriteRecording.read(path: signals.path(file), keys: keys) { key in
        writable.first { gatt.characteristicKey(at: $0) == key }
      }
    } else {
      centralWrites = []
    }
  }

  public func setSource(_ source: any SignalSource, for stream: String) async {}

  public func sampleRate(of stream: String) -> Double { 1 }

  public func perform(_ action: String, arguments: [String: SettingValue]) async throws -> [ScenarioAction] {
    throw ScenarioError(.unknownReference, file: "", line: 0, column: 0, "a generic device has no action '\(action)'")
  }

  public func runClient(_ context: ClientContext) async {
    let id = device.id
    let timeout = device.client[Self.connectTimeout]
    let advertised = peripheral.advertisement
    let profile = peripheral.profile
    let filter = ScanFilter(
      serviceUUIDs: advertised.localName == nil ? advertised.serviceUUIDs : [], namePrefix: advertised.localName)
    let writes = centralWrites
    let session = ClientSession(device: id, context: context, reconnect: device.client[Self.reconnect])
    await session.run(
      connect: { () async throws -> any CentralConnection in
        let found = try await context.link.firstPeripheral(
          matching: filter, within: timeout, clock: context.clock, what: "generic device")
        return try await context.link.connect(found.id, timeout: timeout)
      },
      serve: { (connection: any CentralConnection) async throws in
        try await Self.serve(connection, writes: writes, profile: profile, context: context, device: id)
      },
      close: { connection in await connection.disconnect() })
  }

  /// Subscribes to every characteristic of the profile that notifies or
  /// indicates and reports each value, writing `writes` from the first
  /// subscription on, until the link ends. Only the profile's: over BlueZ the
  /// device's database also holds bluetoothd's own services (GATT's Service
  /// Changed among them), which the device does not declare.
  private static func serve(
    _ connection: any CentralConnection, writes: [WriteRecording.Entry], profile: GATTProfile,
    context: ClientContext, device id: String
  ) async throws {
    let observer = context.observer
    let services = try await connection.discoverServices()
    let sending: [DiscoveredCharacteristic] = services.flatMap(\.characteristics).filter { characteristic in
      profile.characteristic(at: characteristic.address) != nil
        && (characteristic.properties.contains(.notify) || characteristic.properties.contains(.indicate))
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      // The recorded writes count from the first subscription (the connection, when there is none).
      if sending.isEmpty, !writes.isEmpty {
        group.addTask { try await write(writes, on: connection, clock: context.clock) }
      }
      for (index, characteristic) in sending.enumerated() {
        let stream: NotificationStream = try await connection.notifications(of: characteristic.address)
        if index == 0, !writes.isEmpty {
          group.addTask { try await write(writes, on: connection, clock: context.clock) }
        }
        let key: String = profile.characteristicKey(at: characteristic.address)
        group.addTask {
          for try await value in stream {
            observer.event("notification", device: id, detail: key + " " + HexBytes.format(value))
          }
        }
      }
      if sending.isEmpty { _ = try await connection.disconnected() }
      try await group.waitForAll()
    }
  }

  /// Writes `writes` at their times from now; a refusal is what the recording
  /// may hold (its answer column), so it does not end the session.
  private static func write(
    _ writes: [WriteRecording.Entry], on connection: any CentralConnection, clock: some Clock<Duration>
  ) async throws {
    let start = clock.now
    for write in writes {
      let due: Duration = write.time < Duration.zero ? Duration.zero : write.time
      try await clock.sleep(until: start.advanced(by: due), tolerance: nil)
      do {
        try await connection.write(write.value, to: write.characteristic, type: write.type)
      } catch {
        guard error.attributeError != nil else { throw error }
      }
    }
  }
}
