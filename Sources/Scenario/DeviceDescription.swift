/// What a scenario may say about one device model: its settings, streams,
/// actions, and what its client can report. The parser checks a scenario
/// against these, and `doppel devices` prints them.
public struct DeviceDescription: Sendable {
  /// The model's name in scenarios and on the command line.
  public var model: String
  public var summary: String
  /// Keys allowed under the device's `config:`.
  public var settings: [SettingSpec]
  /// Streams a `streams:` entry or `set-stream` may drive.
  public var streams: [StreamSpec]
  /// Model-specific timeline actions.
  public var actions: [ActionSpec]
  /// Keys allowed under the device's `client:` (end-to-end runs).
  public var clientSettings: [SettingSpec]
  /// Figures the client derives, for `metric` expectations.
  public var metrics: [String]
  /// Events the client can report, for `event` expectations (beside
  /// `connected`, `disconnected` and `malformed`, which every client has).
  public var events: [String]
  /// The characteristics' keys (`uart-tx`, `bvp`, …), for device-side
  /// expectations and `after: subscribed` triggers; empty when not known.
  public var characteristics: [String]
  /// What the firmware reports understanding (`start-streaming`, `script`, …),
  /// for `firmware-event` expectations.
  public var firmwareEvents: [String]
  /// Whether a device entry declares the model's profile (`profile:`), as a
  /// `generic` device's does; other models have their own.
  public var declaresProfile: Bool

  public init(
    model: String, summary: String, settings: [SettingSpec] = [], streams: [StreamSpec] = [],
    actions: [ActionSpec] = [], clientSettings: [SettingSpec] = [], metrics: [String] = [], events: [String] = [],
    characteristics: [String] = [], firmwareEvents: [String] = [], declaresProfile: Bool = false
  ) {
    self.model = model
    self.summary = summary
    self.settings = settings
    self.streams = streams
    self.actions = actions
    self.clientSettings = clientSettings
    self.metrics = metrics
    self.events = events
    self.characteristics = characteristics
    self.firmwareEvents = firmwareEvents
    self.declaresProfile = declaresProfile
  }

  /// The events every client reports.
  public static let commonEvents = ["connected", "disconnected", "malformed"]
}

/// One setting: its key, kind, default and meaning.
public struct SettingSpec: Sendable {
  /// The kinds of value a setting takes.
  public enum Kind: Sendable, Hashable {
    case number(ClosedRange<Double>)
    case integer(ClosedRange<Int>)
    case text
    case flag
    case duration
    case choice([String])

    /// How the kind reads in an error message.
    public var expectation: String {
      switch self {
      case .number(let range): "a number from \(range.lowerBound) to \(range.upperBound)"
      case .integer(let range): "a whole number from \(range.lowerBound) to \(range.upperBound)"
      case .text: "text"
      case .flag: "true or false"
      case .duration: "a duration like 500ms, 10s, 2m or 1h"
      case .choice(let choices): "one of " + choices.joined(separator: ", ")
      }
    }
  }

  public var key: String
  public var kind: Kind
  public var defaultValue: SettingValue?
  public var help: String

  public init(_ key: String, _ kind: Kind, default defaultValue: SettingValue? = nil, help: String) {
    self.key = key
    self.kind = kind
    self.defaultValue = defaultValue
    self.help = help
  }
}

/// A stream a device sends: its name, unit and what it is.
public struct StreamSpec: Sendable {
  public var name: String
  public var unit: String
  public var help: String

  public init(_ name: String, unit: String, help: String) {
    self.name = name
    self.unit = unit
    self.help = help
  }
}

/// A model-specific timeline action and its parameters.
public struct ActionSpec: Sendable {
  public var name: String
  public var parameters: [SettingSpec]
  public var help: String

  public init(_ name: String, parameters: [SettingSpec] = [], help: String) {
    self.name = name
    self.parameters = parameters
    self.help = help
  }
}

extension [SettingSpec] {
  /// `values` with every default of these settings filled in where `values` has none.
  public func withDefaults(_ values: [String: SettingValue]) -> [String: SettingValue] {
    var complete = values
    for spec in self where complete[spec.key] == nil {
      if let value = spec.defaultValue { complete[spec.key] = value }
    }
    return complete
  }
}

extension SettingSpec {
  /// The value `text` gives this setting (as typed on a command line), or
  /// `nil` when it is not of the setting's kind or out of its range.
  public func value(parsing text: String) -> SettingValue? {
    switch kind {
    case .number(let range):
      guard let number = Double(text), number.isFinite, range.contains(number) else { return nil }
      return .number(number)
    case .integer(let range):
      guard let number = Int(text), range.contains(number) else { return nil }
      return .integer(number)
    case .text:
      return text.isEmpty ? nil : .text(text)
    case .flag:
      switch text.lowercased() {
      case "true", "yes", "on", "1": return .flag(true)
      case "false", "no", "off", "0": return .flag(false)
      default: return nil
      }
    case .duration:
      return ScenarioDuration.parse(text).map(SettingValue.duration)
    case .choice(let choices):
      return choices.contains(text) ? .text(text) : nil
    }
  }
}
