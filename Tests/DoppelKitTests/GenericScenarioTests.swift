import DoppelKit
import Foundation
import Testing

/// A `generic` device declared in a scenario or in a profile file the
/// scenario names: checked with file, line and column, then run end to end
/// in the loopback with its plain GATT client.
@Suite(.timeLimit(.minutes(1)))
struct GenericScenarioTests {
  let folder: String

  init() throws {
    folder = NSTemporaryDirectory() + "generic-scenario-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
  }

  func write(_ name: String, _ text: String) throws -> String {
    let path = folder + "/" + name
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  func errors(_ yaml: String, file: String = "generic.yaml") -> [String] {
    do {
      _ = try DeviceCatalog.parser.parse(yaml: yaml, file: folder + "/" + file)
      return []
    } catch {
      return error.errors.map(\.description)
    }
  }

  static let profile = """
    advertising:
      name: Sensor-7
      services: [6e400001-b5a3-f393-e0a9-e50e24dcca9e]
      manufacturer-data: [{company: 89, data: "01 02 03"}]
    services:
      - uuid: 6e400001-b5a3-f393-e0a9-e50e24dcca9e
        name: Sensor
        characteristics:
          - {uuid: 6e400003-b5a3-f393-e0a9-e50e24dcca9e, name: Data, properties: [notify]}
          - {uuid: 6e400002-b5a3-f393-e0a9-e50e24dcca9e, name: Control, properties: [write]}
          - uuid: 2a19
            name: Battery Level
            properties: [read]
            value: "64"
            descriptors: [{uuid: 2901, text: battery}]
    replay:
      - {file: data.csv, from: subscribed}
    responses:
      - characteristic: control
        value: "01"
        reply: [{characteristic: data, value: "ac 01", delay: 5ms}]
      - {characteristic: control, pattern: "ff.*", error: 0xfc}
    """

  @Test func aProfileFileWithARecordingRunsEndToEnd() async throws {
    _ = try write(
      "data.csv",
      "time,characteristic,value\n"
        + (0..<50).map { "\(Double($0) * 0.1),data,a0\(String(format: "%02x", $0))" }
        .joined(separator: "\n") + "\n")
    _ = try write("sensor.profile.yaml", Self.profile)
    let path = try write(
      "sensor.yaml",
      """
      scenario: a sensor from its profile
      duration: 20s
      devices:
        - id: sensor
          model: generic
          profile: sensor.profile.yaml
          client: {reconnect: false}
      timeline:
        - {after: subscribed, characteristic: data, delay: 3s, do: disconnect}
      expect:
        - event: {name: notification, count: 30}
        - central-subscribed: data
      """)
    let scenario = try DeviceCatalog.parser.parse(file: path)
    let profile = try #require(scenario.devices[0].profile)
    #expect(profile.gatt.characteristicKeys == ["data", "control", "battery-level"])
    #expect(profile.advertisement.manufacturerData[89] == [1, 2, 3])
    #expect(profile.replays[0].entries.count == 50)
    #expect(profile.replays[0].entries[49].value == [0xA0, 0x31])
    #expect(profile.responses[1].error == 0xFC)
    let report = try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd)
    for result in report.results {
      #expect(result.passed, "\(result.expected): \(result.observed)")
    }
  }

  @Test func anInlineProfileIsTheSame() throws {
    _ = try write("data.csv", "time,characteristic,value\n0.5,data,01\n")
    let indented = Self.profile.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
    let scenario = try DeviceCatalog.parser.parse(
      yaml: """
        scenario: inline
        devices:
          - id: sensor
            model: generic
            profile:
        \(indented)
        """, file: folder + "/inline.yaml")
    #expect(scenario.devices[0].profile?.replays.first?.entries.count == 1)
    #expect(scenario.devices[0].profile?.responses.count == 2)
  }

  @Test func problemsInAProfileFileAreAtTheirPlaceInIt() throws {
    _ = try write(
      "bad.profile.yaml",
      """
      services:
        - uuid: 180x
          characteristics:
            - {uuid: 2a19, properties: [read, nofity]}
      """)
    let found = errors(
      """
      scenario: bad profile
      devices:
        - {id: s, model: generic, profile: bad.profile.yaml}
      """)
    let file = folder + "/bad.profile.yaml"
    #expect(found.count == 2, "\(found)")
    #expect(found.contains { $0.hasPrefix("\(file):2:11: error: a service's 'uuid' is not a UUID") }, "\(found)")
    #expect(found.contains { $0.hasPrefix("\(file):4:41: error: a property is not one of its choices") }, "\(found)")
  }

  @Test func problemsInARecordingAreAtTheirRowAndField() throws {
    _ = try write("data.csv", "time,characteristic,value\n0.1,data,01\n0.2,control,02\n0.3,data,0g\n")
    _ = try write("sensor.profile.yaml", Self.profile)
    let found = errors(
      """
      scenario: bad recording
      devices:
        - {id: s, model: generic, profile: sensor.profile.yaml}
      """)
    #expect(found.count == 1)
    #expect(
      found.first?.hasPrefix(
        "\(folder)/data.csv:3:5: error: the profile has no characteristic 'control' that notifies or indicates")
        == true,
      "\(found)")
  }

  @Test func badReferencesAndAMissingFileAreRefused() throws {
    let found = errors(
      """
      scenario: refs
      devices:
        - id: s
          model: generic
          profile:
            services:
              - uuid: 180d
                characteristics: [{uuid: 2a37, name: Heart Rate, properties: [notify]}]
            responses:
              - {characteristic: heart-rate, value: "01", error: write-not-permitted}
        - {id: t, model: generic, profile: nowhere.yaml}
        - {id: u, model: blend-micro, profile: nowhere.yaml}
      """)
    #expect(found.count == 3, "\(found)")
    #expect(found[0].contains(":10:28: error: the profile has no characteristic 'heart-rate' that takes writes"))
    #expect(found[1].contains(":11:38: error: the profile file \(folder)/nowhere.yaml does not exist"))
    #expect(found[2].contains(":12:33: error: unknown key 'profile' in a device"))
  }

  @Test func withoutAProfileItIsListedWithDeviceInformation() throws {
    let binding = try DeviceCatalog.makeBinding(model: "generic")
    #expect(binding.model.profile.characteristicKeys == ["manufacturer-name"])
    #expect(DeviceCatalog.models.contains("generic"))
  }
}
