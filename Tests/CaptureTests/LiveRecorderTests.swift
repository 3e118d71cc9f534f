import Capture
import DoppelKit
import Foundation
import Generic
import Loopback
import Synchronization
import Testing

/// `LiveRecorder` over the loopback, in virtual time: a generic device with
/// a known database and known notification times is recorded, and what is
/// written must declare that database, hold the values byte for byte at
/// their times, load as a scenario, and replay the same payloads.
@Suite(.timeLimit(.minutes(1)))
struct LiveRecorderTests {
  static let service: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
  static let data = CharacteristicAddress(service: service, characteristic: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
  static let status = CharacteristicAddress(service: service, characteristic: "6E400004-B5A3-F393-E0A9-E50E24DCCA9E")
  static let secret = CharacteristicAddress(service: service, characteristic: "6E400005-B5A3-F393-E0A9-E50E24DCCA9E")
  static let control = CharacteristicAddress(
    service: service, characteristic: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
  static let battery = CharacteristicAddress(service: BluetoothUUID(0x180F), characteristic: BluetoothUUID(0x2A19))
  static let long: [UInt8] = Array(0xB0..<0xC4)

  /// A new device each time: tests run side by side, each on an air of its own.
  static func device() -> GenericPeripheral {
    GenericPeripheral(
      profile: try! GATTProfile([
        ServiceDefinition(
          service, name: "Sensor",
          characteristics: [
            CharacteristicDefinition(data.characteristic, name: "Data", properties: [.notify]),
            CharacteristicDefinition(control.characteristic, name: "Control", properties: [.write]),
            CharacteristicDefinition(
              status.characteristic, name: "Status", properties: [.read, .indicate], initialValue: [0x01, 0x02],
              descriptors: [.userDescription("status")]),
            CharacteristicDefinition(secret.characteristic, name: "Secret", properties: [.read]),
          ]),
        ServiceDefinition(
          battery.service, name: "Battery",
          characteristics: [
            CharacteristicDefinition(
              battery.characteristic, name: "Battery Level", properties: [.read], initialValue: [0x64])
          ]),
      ]),
      advertisement: AdvertisementData(
        localName: "Sensor-7", serviceUUIDs: [service], manufacturerData: [0x0059: [1, 2, 3]],
        serviceData: [BluetoothUUID(0x180F): [0x64]]),
      replays: [
        NotificationReplay(
          entries: [
            .init(time: .milliseconds(100), characteristic: data, value: [0xA0]),
            .init(time: .milliseconds(150), characteristic: data, value: [0xA1, 0x01]),
            .init(time: .milliseconds(250), characteristic: status, value: [0x07]),
            .init(time: .milliseconds(400), characteristic: data, value: [0xA2]),
            .init(time: .milliseconds(1200), characteristic: data, value: long),
            .init(time: .milliseconds(2500), characteristic: data, value: [0xA9]),
          ], anchor: .subscribed, loops: false)
      ])
  }

  /// The recording's rows up to 2 s: the data key is its UUID's first eight digits.
  static let recorded = [
    "0.100000,6e400003,a0", "0.150000,6e400003,a101", "0.250000,6e400004,07", "0.400000,6e400003,a2",
    "1.200000,6e400003," + long.map { String(format: "%02x", $0) }.joined(),
  ]

  let folder = NSTemporaryDirectory() + "live-recorder-\(UUID().uuidString)"

  /// Hosts the device on a loopback with an executor of its own, records it
  /// (`during` runs beside the recording, given the air, the device's
  /// address and the recording's task), and returns what was recorded.
  func record(
    _ target: LiveRecorder.Target, for duration: Duration, scanLimit: Duration = .seconds(5),
    during: @escaping @Sendable (LoopbackAir, PeripheralID, Task<LiveRecording, any Error>) async -> Void = { _, _, _ in
    }
  ) async throws -> LiveRecording {
    let transport = LoopbackTransport()
    let executor = try #require(transport.executor)
    let air = transport.air
    let clock = transport.clock
    let done = Done()
    let address = try await Task(executorPreference: executor) {
      try await air.host(Self.device(), address: "00:AA:01:00:00:23", preferredMTU: 247)
    }.value
    let recording = Task(executorPreference: executor) {
      defer { done.set() }
      let recorder = LiveRecorder(
        link: try air.makeCentral(preferredMTU: 247), clock: clock, place: "the loopback", scanLimit: scanLimit)
      return try await recorder.record(target, for: duration)
    }
    let beside = Task(executorPreference: executor) { await during(air, address, recording) }
    try await transport.run(for: .seconds(120), granularity: .seconds(1), ended: { done.value })
    beside.cancel()
    await Task(executorPreference: executor) { await air.removeAll() }.value
    await transport.shutdown()
    return try await recording.value
  }

  func files(_ recording: LiveRecording) -> [String: String] {
    Dictionary(uniqueKeysWithValues: recording.scenario.files.map { ($0.name, $0.text) })
  }

  @Test func theWrittenProfileHasTheDatabaseTheValuesAndTheAdvertising() async throws {
    let recording = try await record(.name("Sensor"), for: .seconds(2))
    #expect(recording.ending == .elapsed)
    #expect(recording.recorded == .seconds(2))
    let profile = try #require(files(recording)[ImportedScenario.profileFile])
    #expect(profile.contains("  name: \"Sensor-7\"\n"))
    #expect(profile.contains("  services: [6e400001-b5a3-f393-e0a9-e50e24dcca9e]\n"))
    #expect(profile.contains("    - {company: 89, data: \"010203\"}\n"))
    #expect(profile.contains("    - {uuid: 180f, data: \"64\"}\n"))
    #expect(
      profile.contains(
        """
          - uuid: 6e400001-b5a3-f393-e0a9-e50e24dcca9e
            characteristics:
              - uuid: 6e400003-b5a3-f393-e0a9-e50e24dcca9e
                name: 6e400003
                properties: [notify]
              - uuid: 6e400002-b5a3-f393-e0a9-e50e24dcca9e
                name: 6e400002
                properties: [write]
              - uuid: 6e400004-b5a3-f393-e0a9-e50e24dcca9e
                name: 6e400004
                properties: [read, indicate]
                value: "0102"
                descriptors:
                  - {uuid: 2901, value: "737461747573"}
              - uuid: 6e400005-b5a3-f393-e0a9-e50e24dcca9e
                name: 6e400005
                properties: [read]
          - uuid: 180f
            characteristics:
              - uuid: 2a19
                name: battery-level
                properties: [read]
                value: "64"
        replay:
          - {file: notifications.csv, from: subscribed}

        """), "\(profile)")
    // The characteristic that refuses reads is declared without a value, and the output says so.
    #expect(
      recording.scenario.notes.contains {
        $0.contains("6e400005") && $0.contains("could not be read") && $0.contains("reads of it are refused")
      }, "\(recording.scenario.notes)")
    #expect(!recording.scenario.files.contains { $0.name == ImportedScenario.writesFile })
  }

  @Test func theRecordingHoldsEveryValueInOrderAtItsTimeAndReplays() async throws {
    let recording = try await record(.name("Sensor"), for: .seconds(2))
    let written = files(recording)
    let rows = try #require(written[ImportedScenario.recordingFile]).split(separator: "\n").map(String.init)
    #expect(rows == ["time,characteristic,value"] + Self.recorded)
    let scenarioText = try #require(written[ImportedScenario.scenarioFile])
    #expect(scenarioText.contains("# Recorded by `doppel record` on the loopback:\n"))
    #expect(scenarioText.contains("duration: 82000ms\n"), "a bound: the 2 s recorded, 20 s after, a minute to find")
    #expect(scenarioText.contains("  - central-subscribed: 6e400003\n  - central-subscribed: 6e400004\n"))
    #expect(
      scenarioText.contains("timeline:\n  - {after: subscribed, delay: 22000000us, do: end}\n"),
      "the run ends 20 s after the recording did, counted from the first subscription")
    #expect(recording.scenario.summary.first == "5 notifications and indications → notifications.csv")

    // The files load as a scenario, the recording read back as written.
    try recording.scenario.write(into: folder)
    let scenario = try DeviceCatalog.parser.parse(file: folder + "/" + ImportedScenario.scenarioFile)
    let profile = try #require(scenario.devices.first?.profile)
    #expect(profile.gatt.characteristicKeys == ["6e400003", "6e400002", "6e400004", "6e400005", "battery-level"])
    let entries = try #require(profile.replays.first?.entries)
    #expect(entries.map(\.value) == [[0xA0], [0xA1, 0x01], [0x07], [0xA2], Self.long])
    #expect(entries.map { ($0.time.nanoseconds + 500) / 1000 } == [100_000, 150_000, 250_000, 400_000, 1_200_000])
    #expect(entries.map(\.characteristic) == [Self.data, Self.data, Self.status, Self.data, Self.data])

    // Replayed end to end in the loopback, Doppel's generic client receives the same payloads.
    let lines = Mutex<[String]>([])
    let report = try await ScenarioRunner(
      scenario: scenario, bindings: DeviceCatalog.bindings, progress: { line in lines.withLock { $0.append(line) } }
    ).run(on: LoopbackTransport(), mode: .endToEnd)
    for result in report.results { #expect(result.passed, "\(result.expected): \(result.observed)") }
    let received = lines.withLock { $0 }.compactMap { line -> String? in
      guard let range = line.range(of: "device: notification (") else { return nil }
      return String(line[range.upperBound...].dropLast()).replacingOccurrences(of: " ", with: ",")
    }
    // The first values are printed, in order; every one is counted.
    let expected = Self.recorded.map { $0.split(separator: ",").dropFirst().joined(separator: ",") }
    #expect(!received.isEmpty)
    #expect(received == Array(expected.prefix(received.count)))
    #expect(report.observations["device"]?.events["notification"] == expected.count)
  }

  @Test func aLinkThatDropsEndsTheRecordingWithADisconnectFaultAtThatMoment() async throws {
    let recording = try await record(.address("00:aa:01:00:00:23"), for: .seconds(5)) { air, address, _ in
      try? await air.clock.sleep(for: .milliseconds(1500))
      await air.loseLinks(to: address)
    }
    #expect(recording.ending == .linkEnded(.linkLoss))
    #expect(recording.recorded == .milliseconds(1500))
    let written = files(recording)
    let rows = try #require(written[ImportedScenario.recordingFile]).split(separator: "\n").dropFirst()
    #expect(rows.map(String.init) == Self.recorded, "every value before the drop, none after")
    let scenarioText = try #require(written[ImportedScenario.scenarioFile])
    #expect(
      scenarioText.contains(
        "timeline:\n  - {after: subscribed, delay: 1500000us, do: disconnect}\n"
          + "  - {after: subscribed, delay: 21500000us, do: end}\n"))
    #expect(scenarioText.contains("# The link ended 1.500000 s after that, reason link lost.\n"))
    #expect(
      recording.scenario.summary.contains(
        "disconnection 1.500000 s after the first subscription, reason link lost → a timeline fault"))
    try recording.scenario.write(into: folder)
    let scenario = try DeviceCatalog.parser.parse(file: folder + "/" + ImportedScenario.scenarioFile)
    #expect(scenario.timeline.count == 2, "the disconnection and the end")
  }

  @Test func cancellingStopsEarlyAndKeepsWhatWasRecorded() async throws {
    let recording = try await record(.name("Sensor-7"), for: .seconds(60)) { air, _, recording in
      try? await air.clock.sleep(for: .milliseconds(500))
      recording.cancel()
    }
    #expect(recording.ending == .interrupted)
    #expect(recording.recorded == .milliseconds(500))
    let rows = try #require(files(recording)[ImportedScenario.recordingFile]).split(separator: "\n").dropFirst()
    #expect(rows.map(String.init) == Array(Self.recorded.prefix(4)))
    #expect(files(recording)[ImportedScenario.scenarioFile]?.contains("for 0.5 s, stopped early.") == true)
  }

  @Test func noDeviceWithinTheScanLimitNamesThePlaceAndTheFilter() async throws {
    do {
      _ = try await record(.name("Nobody"), for: .seconds(1), scanLimit: .seconds(3))
      Issue.record("a device that is not there was recorded")
    } catch let error as RecordingError {
      #expect(error.kind == .notFound)
      #expect(error.message == "no device named Nobody… found on the loopback within 3 s")
    }
  }

  /// Set once the recording has ended, for the loopback's run to stop.
  final class Done: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .sequentiallyConsistent) }
    var value: Bool { flag.load(ordering: .sequentiallyConsistent) }
  }
}
