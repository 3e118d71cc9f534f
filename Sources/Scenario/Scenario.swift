/// A scenario: the devices a run hosts, what their streams carry, what
/// happens when, and what a client must observe. Made by `ScenarioParser`
/// from a YAML file (format: Scenarios/README.md).
public struct Scenario: Sendable {
  /// The scenario's name (its `scenario:` key).
  public var name: String
  public var description: String?
  /// Seeds every random source that has no seed of its own.
  public var seed: UInt64
  /// How long the run lasts; `nil` runs until an `end` event (or, for
  /// `doppel run`, until interrupted).
  public var duration: Duration?
  public var devices: [DeviceSpec]
  /// Events in file order; `ScenarioRunner` schedules them.
  public var timeline: [TimelineEvent]
  public var expectations: [Expectation]
  /// The file it came from, for messages and for recordings' relative paths.
  public var file: String

  public init(
    name: String, description: String? = nil, seed: UInt64 = 1, duration: Duration? = nil,
    devices: [DeviceSpec], timeline: [TimelineEvent] = [], expectations: [Expectation] = [], file: String = "<memory>"
  ) {
    self.name = name
    self.description = description
    self.seed = seed
    self.duration = duration
    self.devices = devices
    self.timeline = timeline
    self.expectations = expectations
    self.file = file
  }

  /// The device with `id`.
  public func device(_ id: String) -> DeviceSpec? { devices.first { $0.id == id } }
}

/// Where in a scenario file something was written.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
  public var file: String
  public var line: Int
  public var column: Int

  public init(file: String, line: Int, column: Int) {
    self.file = file
    self.line = line
    self.column = column
  }

  public var description: String { "\(file):\(line):\(column)" }
}

/// One emulated device of a scenario.
public struct DeviceSpec: Sendable {
  /// How the timeline and expectations refer to it.
  public var id: String
  /// The device model (`blend-micro`, `emstat-pico`, `e4`, `actigraph-link`).
  public var model: String
  /// The advertised name; `nil` keeps the model's own.
  public var name: String?
  /// A serial number, for models that have one.
  public var serial: String?
  /// The adapter hosting it on BlueZ (hci name or address); `nil` for the first.
  public var adapter: String?
  /// Whether it advertises from the start (default) or waits for an `advertise` event.
  public var advertisesAtStart: Bool
  /// The model's settings, checked against its description.
  public var settings: [String: SettingValue]
  /// Sources for the model's streams, by stream name.
  public var streams: [String: SourceSpec]
  /// Settings for the client stack in end-to-end runs.
  public var client: [String: SettingValue]
  /// The declared profile of a model that takes one (`generic`); `nil` otherwise.
  public var profile: ProfileDeclaration?
  public var location: SourceLocation
  /// Where each stream's source (`streams.NAME`) and each setting
  /// (`config.KEY`, `client.KEY`) is written, for errors found after parsing.
  public var locations: [String: SourceLocation] = [:]

  /// Where `key` (`streams.ecg`, `client.script-file`) is written; the device's entry when not known.
  public func location(of key: String) -> SourceLocation { locations[key] ?? location }

  public init(
    id: String, model: String, name: String? = nil, serial: String? = nil, adapter: String? = nil,
    advertisesAtStart: Bool = true, settings: [String: SettingValue] = [:], streams: [String: SourceSpec] = [:],
    client: [String: SettingValue] = [:],
    location: SourceLocation = SourceLocation(file: "<memory>", line: 0, column: 0)
  ) {
    self.id = id
    self.model = model
    self.name = name
    self.serial = serial
    self.adapter = adapter
    self.advertisesAtStart = advertisesAtStart
    self.settings = settings
    self.streams = streams
    self.client = client
    self.location = location
  }
}

/// A setting's value, already checked against the setting's kind.
public enum SettingValue: Hashable, Sendable, CustomStringConvertible {
  case number(Double)
  case integer(Int)
  case text(String)
  case flag(Bool)
  case duration(Duration)
  case list([SettingValue])

  public var number: Double? {
    switch self {
    case .number(let value): value
    case .integer(let value): Double(value)
    default: nil
    }
  }
  public var integer: Int? { if case .integer(let value) = self { value } else { nil } }
  public var text: String? { if case .text(let value) = self { value } else { nil } }
  public var flag: Bool? { if case .flag(let value) = self { value } else { nil } }
  public var duration: Duration? { if case .duration(let value) = self { value } else { nil } }

  public var description: String {
    switch self {
    case .number(let value): "\(value)"
    case .integer(let value): "\(value)"
    case .text(let value): value
    case .flag(let value): "\(value)"
    case .duration(let value): ScenarioDuration.format(value)
    case .list(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
    }
  }
}
