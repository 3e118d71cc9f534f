import ActiGraphLink
import ActiGraphLinkSDK
import Foundation
import GATT
import Scenario
import Signals

/// The ActiGraph Link (GT9X) in scenarios: a monitor with a seeded log of
/// 60 s epochs from an activity pattern and raw acceleration from any
/// source, and the ActiGraph Link SDK-shaped client that scans, connects,
/// configures it with JSON, downloads epochs and streams raw data,
/// reporting records, progress and the SDK's error codes.
public struct ActiGraphLinkBinding: DeviceBinding {
  static let battery = Setting.number("battery", in: 0...1, default: 0.9, help: "battery level, 0…1")
  static let clock = Setting.text(
    "clock", default: "07-21-2015 12:00:00", help: "the device clock at the start, MM-dd-yyyy HH:mm:ss (UTC)")
  static let logHours = Setting.number(
    "log-hours", in: 0...720, default: 24, help: "hours of epochs logged before the clock")
  static let activity = Setting.text(
    "activity", default: "day",
    help: "what the wearer does from midnight, cycled: 'day' or e.g. 'sleep 7h, walking 30m, running 20m, not-worn 1h'")
  static let rawRate = Setting.integer(
    "raw-rate", in: 30...100, default: 30, help: "raw acceleration rate, Hz (steps of 10)")
  static let transferErrorAt = Setting.optionalInteger(
    "transfer-error-at", in: 0...100,
    help: "the first epoch download fails with a transfer error after this percent of its records")
  static let refuseConfiguration = Setting.flag(
    "refuse-configuration", default: false, help: "the device refuses every configuration")
  static let sdkAccessDisabled = Setting.flag(
    "sdk-access-disabled", default: false,
    help: "the device's SDK access is switched off: every request is refused (SDK error 4)")
  static let batchInterval = Setting.duration(
    "batch-interval", default: .milliseconds(10), help: "device time per batch of epochs")
  static let failAt = Setting.requiredInteger("at", in: 0...100, help: "percent of the records sent first")
  static let batteryLevel = Setting.requiredNumber("level", in: 0...1, help: "the new level, 0…1")
  static let scan = Setting.duration("scan", default: .seconds(3), help: "how long enumerateDevices scans")
  static let connectTwice = Setting.flag("connect-twice", default: false, help: "call connectToDevice a second time")
  static let configuration = Setting.optionalText(
    "configuration", help: "a configuration JSON to send after connecting")
  static let downloadFrom = Setting.optionalText(
    "download-from", help: "download epochs from this date-time (MM-dd-yyyy HH:mm:ss)")
  static let downloadTo = Setting.optionalText("download-to", help: "… to this date-time")
  static let streamRaw = Setting.optionalDuration("stream-raw", help: "stream raw acceleration this long")

  public static let description = DeviceDescription(
    model: "actigraph-link",
    summary:
      "ActiGraph Link (GT9X) activity monitor: 60 s epochs (counts, steps, heart rate, wear), raw acceleration 30–100 Hz",
    settings: [
      battery.spec, clock.spec, logHours.spec, activity.spec, rawRate.spec, transferErrorAt.spec,
      refuseConfiguration.spec, sdkAccessDisabled.spec, batchInterval.spec,
    ],
    streams: [
      StreamSpec("acc.x", unit: "g", help: "raw acceleration along x"),
      StreamSpec("acc.y", unit: "g", help: "raw acceleration along y"),
      StreamSpec("acc.z", unit: "g", help: "raw acceleration along z"),
    ],
    actions: [
      ActionSpec("transfer-error", parameters: [failAt.spec], help: "the next epoch download fails part-way"),
      ActionSpec("battery", parameters: [batteryLevel.spec], help: "set the battery level"),
    ],
    clientSettings: [
      scan.spec, connectTwice.spec, configuration.spec, downloadFrom.spec, downloadTo.spec, streamRaw.spec,
    ],
    metrics: ["records", "progress", "error-code", "battery", "records-per-second"],
    events: ["device-found", "configured", "download-started", "download-completed", "status", "sdk-error"],
    firmwareEvents: ActiGraphLink.requestNames)

  /// `doppel watch` streams raw acceleration (until stopped).
  public static var watchSettings: [String: SettingValue] { [streamRaw.key: .duration(.seconds(24 * 3600))] }

  public let device: DeviceSpec
  let monitor: ActiGraphLink

  public var model: any PeripheralModel { monitor }

  public init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError) {
    self.device = device
    let settings = device.settings
    let clockText = settings[Self.clock]
    guard let clock = AGDateTime.parse(clockText) else {
      throw ScenarioError(
        .invalidValue, file: device.location.file, line: device.location.line, column: device.location.column,
        "clock '\(clockText)' is not MM-dd-yyyy HH:mm:ss")
    }
    let activityText = settings[Self.activity]
    guard let activity = activityText == "day" ? ActivityPattern.day : ActivityPattern(parsing: activityText) else {
      throw ScenarioError(
        .invalidValue, file: device.location.file, line: device.location.line, column: device.location.column,
        "activity '\(activityText)' is not 'day' or a list like 'sleep 7h, walking 30m'")
    }
    let rate = settings[Self.rawRate]
    let configuration = ActiGraphLinkConfiguration(
      serialNumber: device.serial ?? "TAS1A14758923", batteryLevel: settings[Self.battery],
      clockTime: Double(clock), logHours: settings[Self.logHours], activity: activity,
      seed: signals.seed(device: device.id, stream: "epochs"), rawRate: rate,
      batchInterval: settings[Self.batchInterval],
      transferErrorAt: settings[Self.transferErrorAt],
      refusesConfiguration: settings[Self.refuseConfiguration],
      sdkAccessDisabled: settings[Self.sdkAccessDisabled])
    func source(_ stream: String, _ fallback: Double) throws(ScenarioError) -> any SignalSource {
      guard let spec = device.streams[stream] else { return ConstantSignal(fallback) }
      return try signals.make(spec, for: device, stream: stream, sampleRate: Double(configuration.rawRate))
    }
    monitor = ActiGraphLink(
      configuration: configuration, accelerationX: try source("acc.x", 0), accelerationY: try source("acc.y", 0),
      accelerationZ: try source("acc.z", 1))
  }

  public func setSource(_ source: any SignalSource, for stream: String) async {
    guard let axis = ["acc.x", "acc.y", "acc.z"].firstIndex(of: stream) else { return }
    await monitor.setSource(source, axis: axis)
  }

  public func sampleRate(of stream: String) -> Double { Double(monitor.configuration.rawRate) }

  public func perform(_ action: String, arguments: [String: SettingValue]) async throws -> [ScenarioAction] {
    switch action {
    case "transfer-error":
      await monitor.failNextDownload(atPercent: arguments[Self.failAt])
    case "battery":
      await monitor.setBattery(arguments[Self.batteryLevel])
    default:
      throw ScenarioError(
        .unknownReference, file: "", line: 0, column: 0, "an actigraph-link has no action '\(action)'")
    }
    return []
  }

  public func runClient(_ context: ClientContext) async {
    let sdk = AGDeviceSDK(link: context.link, clock: context.clock)
    let inbox = SDKInbox()
    let reader = Task(executorPreference: Task.currentExecutorPreference) {
      await report(sdk.messages, inbox: inbox, clock: context.clock, observer: context.observer)
    }
    // The SDK does not reconnect by itself, and neither does the app.
    await ClientSession(device: device.id, context: context, reconnect: false).run(
      connect: { try await connect(sdk, clock: context.clock) },
      serve: { sdk in await drive(sdk, inbox: inbox, clock: context.clock) },
      close: { sdk in await sdk.disconnectFromDevice() })
    // Everything the SDK delivered reaches the observer before the run's summary.
    await sdk.finish()
    await reader.value
  }

  /// Enumerates (again and again, like an app's list) until the monitor
  /// shows up, then connects to it.
  private func connect(_ sdk: AGDeviceSDK, clock: any Clock<Duration>) async throws -> AGDeviceSDK {
    let serial = monitor.configuration.serialNumber
    let scan = device.client[Self.scan]
    while await !sdk.foundDevices.contains(serial) {
      await sdk.enumerateDevices(scan.seconds)
      while await sdk.isEnumerating { try await clock.sleep(for: .milliseconds(100)) }
      try Task.checkCancellation()
    }
    await sdk.connectToDevice(serial)
    guard await sdk.getConnectedDevice() == serial else {
      throw GATTError(.notConnected, "connectToDevice(\(serial)) did not connect")
    }
    return sdk
  }

  /// What the app does with the SDK once connected, as the client settings
  /// say; returns when the link is lost.
  private func drive(_ sdk: AGDeviceSDK, inbox: SDKInbox, clock: any Clock<Duration>) async {
    let client = device.client
    let serial = monitor.configuration.serialNumber
    if client[Self.connectTwice] { await sdk.connectToDevice(serial) }
    await sdk.getDeviceStatus()
    if let configuration = client[Self.configuration] {
      await sdk.configureDevice(configuration)
      try? await clock.sleep(for: .seconds(1))
    }
    if let from = client[Self.downloadFrom], let to = client[Self.downloadTo] {
      await inbox.resetDownload()
      await sdk.configureDevice(#"{"epoch": {"startDateTime": "\#(from)", "stopDateTime": "\#(to)"}}"#)
      while !Task.isCancelled, await !inbox.downloadEnded, await !inbox.disconnected {
        try? await clock.sleep(for: .milliseconds(100))
      }
    }
    if let raw = client[Self.streamRaw] {
      await sdk.configureDevice(#"{"raw": {"stream": true}}"#)
      try? await clock.sleep(for: raw)
      if !Task.isCancelled { await sdk.configureDevice(#"{"raw": {"stream": false}}"#) }
    }
    // Stay connected until the run ends or the link is lost.
    while !Task.isCancelled, await !inbox.disconnected { try? await clock.sleep(for: .milliseconds(100)) }
  }

  /// Reports every SDK message to the observer.
  private func report(
    _ messages: AsyncStream<AGMessage>, inbox: SDKInbox, clock: any Clock<Duration>, observer: ClientObserver
  ) async {
    let id = device.id
    let elapsed = Stopwatch(clock)
    var downloadStart: Duration?
    for await message in messages {
      switch message.value {
      case .deviceFound(let serial):
        observer.event("device-found", device: id, detail: serial)
      case .devices:
        break
      case .deviceConnected:
        // The session reports the connection.
        await inbox.setDisconnected(false)
      case .deviceDisconnected:
        await inbox.setDisconnected(true)
      case .rawConfigured:
        observer.event("configured", device: id, detail: message.json)
      case .raw(_, _, let acceleration, let time, let rate):
        // Device time stamps, as seconds from the start (the device clock's setting).
        let start = time - monitor.configuration.clockTime
        var batch: [(value: Double, stream: String, time: Double?)] = []
        batch.reserveCapacity(3 * acceleration.count)
        for (n, sample) in acceleration.enumerated() {
          let at = start + Double(n) / Double(max(rate, 1))
          batch += [(sample.x, "acc.x", at), (sample.y, "acc.y", at), (sample.z, "acc.z", at)]
        }
        observer.samples(batch, device: id)
      case .epochDownload(let state, let progress):
        observer.metric("progress", Double(progress), device: id)
        switch state {
        case .started:
          downloadStart = elapsed()
          observer.event("download-started", device: id)
        case .completed: observer.event("download-completed", device: id)
        case .downloading: break
        }
      case .epochs(_, _, let records):
        observer.metric("records", Double(records.count), device: id)
        if let downloadStart {
          let seconds = (elapsed() - downloadStart).seconds
          if seconds > 0 { observer.metric("records-per-second", Double(records.count) / seconds, device: id) }
        }
        await inbox.endDownload()
      case .status(let status):
        observer.event("status", device: id, detail: message.json)
        observer.metric("battery", Double(status.battery) / 100, device: id)
      case .error(let error):
        observer.metric("error-code", Double(error.code.rawValue), device: id)
        observer.event("sdk-error", device: id, detail: "code \(error.code.rawValue)")
        observer.error(
          "code \(error.code.rawValue): \(error.code.description) (\(error.extra)) \(message.json)", device: id)
        if error.code == .wirelessTransferError || error.code == .epochDownloadError
          || error.code == .dateFormatError || error.code == .configurationFailed
          || error.code == .unrecognizedConfiguration
        {
          await inbox.endDownload()
        }
      }
    }
  }

}

/// What the scenario client has learnt from the SDK's messages so far.
actor SDKInbox {
  private(set) var downloadEnded = false
  /// Whether the SDK said the link is down.
  private(set) var disconnected = false

  func resetDownload() { downloadEnded = false }
  func setDisconnected(_ down: Bool) { disconnected = down }
  func endDownload() { downloadEnded = true }
}
