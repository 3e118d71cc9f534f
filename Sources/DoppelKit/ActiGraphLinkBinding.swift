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
  public static let description = DeviceDescription(
    model: "actigraph-link",
    summary:
      "ActiGraph Link (GT9X) activity monitor: 60 s epochs (counts, steps, heart rate, wear), raw acceleration 30–100 Hz",
    settings: [
      SettingSpec("battery", .number(0...1), default: .number(0.9), help: "battery level, 0…1"),
      SettingSpec(
        "clock", .text, default: .text("07-21-2015 12:00:00"),
        help: "the device clock at the start, MM-dd-yyyy HH:mm:ss (UTC)"),
      SettingSpec("log-hours", .number(0...720), default: .number(24), help: "hours of epochs logged before the clock"),
      SettingSpec(
        "activity", .text, default: .text("day"),
        help:
          "what the wearer does from midnight, cycled: 'day' or e.g. 'sleep 7h, walking 30m, running 20m, not-worn 1h'"),
      SettingSpec(
        "raw-rate", .integer(30...100), default: .integer(30), help: "raw acceleration rate, Hz (steps of 10)"),
      SettingSpec(
        "transfer-error-at", .integer(0...100),
        help: "the first epoch download fails with a transfer error after this percent of its records"),
      SettingSpec("refuse-configuration", .flag, default: .flag(false), help: "the device refuses every configuration"),
      SettingSpec(
        "batch-interval", .duration, default: .duration(.milliseconds(10)), help: "device time per batch of epochs"),
    ],
    streams: [
      StreamSpec("acc.x", unit: "g", help: "raw acceleration along x"),
      StreamSpec("acc.y", unit: "g", help: "raw acceleration along y"),
      StreamSpec("acc.z", unit: "g", help: "raw acceleration along z"),
    ],
    actions: [
      ActionSpec(
        "transfer-error", parameters: [SettingSpec("at", .integer(0...100), help: "percent of the records sent first")],
        help: "the next epoch download fails part-way"),
      ActionSpec(
        "battery", parameters: [SettingSpec("level", .number(0...1), help: "the new level, 0…1")],
        help: "set the battery level"),
    ],
    clientSettings: [
      SettingSpec("scan", .duration, default: .duration(.seconds(3)), help: "how long enumerateDevices scans"),
      SettingSpec("connect-twice", .flag, default: .flag(false), help: "call connectToDevice a second time"),
      SettingSpec("configuration", .text, help: "a configuration JSON to send after connecting"),
      SettingSpec("download-from", .text, help: "download epochs from this date-time (MM-dd-yyyy HH:mm:ss)"),
      SettingSpec("download-to", .text, help: "… to this date-time"),
      SettingSpec("stream-raw", .duration, help: "stream raw acceleration this long"),
    ],
    metrics: ["records", "progress", "error-code", "battery", "records-per-second"],
    events: ["device-found", "configured", "download-started", "download-completed", "status", "sdk-error"])

  public let device: DeviceSpec
  let monitor: ActiGraphLink

  public var model: any PeripheralModel { monitor }

  public init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError) {
    self.device = device
    let settings = device.settings
    let clockText = settings["clock"]?.text ?? "07-21-2015 12:00:00"
    guard let clock = AGDateTime.parse(clockText) else {
      throw ScenarioError(
        .invalidValue, file: "", line: 0, column: 0, "clock '\(clockText)' is not MM-dd-yyyy HH:mm:ss")
    }
    let activityText = settings["activity"]?.text ?? "day"
    guard let activity = activityText == "day" ? ActivityPattern.day : ActivityPattern(parsing: activityText) else {
      throw ScenarioError(
        .invalidValue, file: "", line: 0, column: 0,
        "activity '\(activityText)' is not 'day' or a list like 'sleep 7h, walking 30m'")
    }
    let rate = settings["raw-rate"]?.integer ?? 30
    let configuration = ActiGraphLinkConfiguration(
      serialNumber: device.serial ?? "TAS1A14758923", batteryLevel: settings["battery"]?.number ?? 0.9,
      clockTime: Double(clock), logHours: settings["log-hours"]?.number ?? 24, activity: activity,
      seed: signals.seed(device: device.id, stream: "epochs"), rawRate: rate,
      batchInterval: settings["batch-interval"]?.duration ?? .milliseconds(10),
      transferErrorAt: settings["transfer-error-at"]?.integer,
      refusesConfiguration: settings["refuse-configuration"]?.flag ?? false)
    func source(_ stream: String, _ fallback: Double) throws(ScenarioError) -> any SignalSource {
      guard let spec = device.streams[stream] else { return ConstantSignal(fallback) }
      return try signals.make(spec, device: device.id, stream: stream, sampleRate: Double(configuration.rawRate))
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
      await monitor.failNextDownload(atPercent: arguments["at"]?.integer ?? 50)
    case "battery":
      await monitor.setBattery(arguments["level"]?.number ?? 1)
    default:
      throw ScenarioError(
        .unknownReference, file: "", line: 0, column: 0, "an actigraph-link has no action '\(action)'")
    }
    return []
  }

  public func runClient(link: any CentralLink, clock: any Clock<Duration>, observer: ClientObserver) async {
    let sdk = AGDeviceSDK(link: link, clock: clock)
    let inbox = SDKInbox()
    let reader = Task(executorPreference: Task.currentExecutorPreference) {
      await report(sdk.messages, inbox: inbox, clock: clock, observer: observer)
    }
    await drive(sdk, inbox: inbox, clock: clock)
    // Everything the SDK delivered reaches the observer before the run's summary.
    await sdk.finish()
    await reader.value
  }

  /// What the app does with the SDK, as the client settings say.
  private func drive(_ sdk: AGDeviceSDK, inbox: SDKInbox, clock: any Clock<Duration>) async {
    let client = device.client
    let serial = monitor.configuration.serialNumber
    let scan = client["scan"]?.duration ?? .seconds(3)
    // Scan until the monitor is found (again and again, like an app's list).
    while !Task.isCancelled, await !sdk.foundDevices.contains(serial) {
      await sdk.enumerateDevices(duration: scan.seconds)
      while await sdk.isEnumerating {
        do { try await clock.sleep(for: .milliseconds(100)) } catch { return }
      }
    }
    guard !Task.isCancelled else { return }
    await sdk.connectToDevice(serial)
    guard await sdk.getConnectedDevice() == serial else {
      while !Task.isCancelled { try? await clock.sleep(for: .seconds(1)) }
      return
    }
    if client["connect-twice"]?.flag == true { await sdk.connectToDevice(serial) }
    await sdk.getDeviceStatus()
    if let configuration = client["configuration"]?.text {
      await sdk.configureDevice(configuration)
      try? await clock.sleep(for: .seconds(1))
    }
    if let from = client["download-from"]?.text, let to = client["download-to"]?.text {
      await inbox.resetDownload()
      await sdk.configureDevice(#"{"epoch": {"startDateTime": "\#(from)", "stopDateTime": "\#(to)"}}"#)
      while !Task.isCancelled, await !inbox.downloadEnded {
        try? await clock.sleep(for: .milliseconds(100))
      }
    }
    if let raw = client["stream-raw"]?.duration {
      await sdk.configureDevice(#"{"raw": {"stream": true}}"#)
      try? await clock.sleep(for: raw)
      if !Task.isCancelled { await sdk.configureDevice(#"{"raw": {"stream": false}}"#) }
    }
    // Stay connected until the run ends.
    while !Task.isCancelled { try? await clock.sleep(for: .seconds(1)) }
    await sdk.disconnectFromDevice()
  }

  /// Reports every SDK message to the observer.
  private func report(
    _ messages: AsyncStream<AGMessage>, inbox: SDKInbox, clock: any Clock<Duration>, observer: ClientObserver
  ) async {
    let id = device.id
    let elapsed = Self.stopwatch(clock)
    var downloadStart: Duration?
    for await message in messages {
      switch message.value {
      case .deviceFound(let serial):
        observer.event("device-found", device: id, detail: serial)
      case .devices:
        break
      case .deviceConnected:
        observer.event("connected", device: id)
      case .deviceDisconnected:
        observer.event("disconnected", device: id)
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

  private static func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
  }
}

/// What the scenario client has learnt from the SDK's messages so far.
actor SDKInbox {
  private(set) var downloadEnded = false

  func resetDownload() { downloadEnded = false }
  func endDownload() { downloadEnded = true }
}
