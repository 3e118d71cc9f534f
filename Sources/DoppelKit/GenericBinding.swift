import GATT
import Generic
import Scenario
import Signals

/// The `generic` model in scenarios: a device declared by its profile (in
/// the scenario, or a profile file it names) — GATT database, advertising
/// data, recorded notifications replayed at their times, answers to writes —
/// as `doppel import` writes one from a capture. Its client is a plain GATT
/// central: it connects, subscribes to every characteristic that notifies or
/// indicates, and reports each value as a `notification` event.
public struct GenericBinding: DeviceBinding {
  static let connectTimeout = Setting.duration(
    "connect-timeout", default: .seconds(60), help: "how long to scan and connect")
  static let reconnect = Setting.flag("reconnect", default: true, help: "connect again after a disconnect")

  public static let description = DeviceDescription(
    model: "generic",
    summary:
      "a device declared by its profile (services, advertising, recorded notifications, answers to writes); "
      + "without one, Device Information only",
    clientSettings: [connectTimeout.spec, reconnect.spec],
    events: ["notification"],
    firmwareEvents: ["write", "replay-skipped"],
    declaresProfile: true)

  public let device: DeviceSpec
  let peripheral: GenericPeripheral

  public var model: any PeripheralModel { peripheral }

  public init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError) {
    self.device = device
    guard let declaration = device.profile else {
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
  }

  public func setSource(_ source: any SignalSource, for stream: String) async {}

  public func sampleRate(of stream: String) -> Double { 1 }

  public func perform(_ action: String, arguments: [String: SettingValue]) async throws -> [ScenarioAction] {
    throw ScenarioError(.unknownReference, file: "", line: 0, column: 0, "a generic device has no action '\(action)'")
  }

  public func runClient(_ context: ClientContext) async {
    let id = device.id
    let observer = context.observer
    let timeout = device.client[Self.connectTimeout]
    let advertised = peripheral.advertisement
    let profile = peripheral.profile
    let filter = ScanFilter(
      serviceUUIDs: advertised.localName == nil ? advertised.serviceUUIDs : [], namePrefix: advertised.localName)
    let session = ClientSession(device: id, context: context, reconnect: device.client[Self.reconnect])
    await session.run(
      connect: { () async throws -> any CentralConnection in
        let found = try await context.link.firstPeripheral(
          matching: filter, within: timeout, clock: context.clock, what: "generic device")
        return try await context.link.connect(found.id, timeout: timeout)
      },
      serve: { connection in
        let services = try await connection.discoverServices()
        let sending = services.flatMap(\.characteristics).filter {
          $0.properties.contains(.notify) || $0.properties.contains(.indicate)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
          for characteristic in sending {
            let stream = try await connection.notifications(of: characteristic.address)
            let key = profile.characteristicKey(at: characteristic.address)
            group.addTask {
              for try await value in stream {
                observer.event("notification", device: id, detail: "\(key) \(HexBytes.format(value))")
              }
            }
          }
          if sending.isEmpty { _ = try await connection.disconnected() }
          try await group.waitForAll()
        }
      },
      close: { connection in await connection.disconnect() })
  }
}
