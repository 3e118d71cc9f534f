/// A setting a device binding declares once — key, kind, default and help —
/// and reads back typed. The binding lists `spec` in its `DeviceDescription`,
/// so scenario validation, `doppel devices`, `advertise`'s and `watch`'s
/// options and the docs all come from this one declaration.
///
/// ```swift
/// static let heartRate = Setting.number("heart-rate", in: 20...250, default: 72, help: "beats per minute")
/// …
/// let rate = device.settings[Self.heartRate]   // a Double, the default when the file says nothing
/// ```
public struct Setting<Value: Sendable>: Sendable {
  /// What validation, help and docs see.
  public let spec: SettingSpec
  private let decode: @Sendable (SettingValue?) -> Value

  private init(_ spec: SettingSpec, decode: @escaping @Sendable (SettingValue?) -> Value) {
    self.spec = spec
    self.decode = decode
  }

  /// The key in scenario files and on the command line.
  public var key: String { spec.key }

  /// The typed value of this setting in `values`; its default when absent.
  public func value(in values: [String: SettingValue]) -> Value { decode(values[spec.key]) }
}

extension Setting where Value == Double {
  /// A number in `range`.
  public static func number(_ key: String, in range: ClosedRange<Double>, default value: Double, help: String)
    -> Setting<Double>
  {
    Setting(SettingSpec(key, .number(range), default: .number(value), help: help)) { $0?.number ?? value }
  }
}

extension Setting where Value == Double {
  /// A number in `range` that must be given (an action's required parameter):
  /// the parser refuses an entry without it, so it is never read absent.
  public static func requiredNumber(_ key: String, in range: ClosedRange<Double>, help: String) -> Setting<Double> {
    Setting(SettingSpec(key, .number(range), help: help)) { $0?.number ?? range.lowerBound }
  }
}

extension Setting where Value == Int {
  /// A whole number in `range` that must be given (an action's required
  /// parameter): the parser refuses an entry without it.
  public static func requiredInteger(_ key: String, in range: ClosedRange<Int>, help: String) -> Setting<Int> {
    Setting(SettingSpec(key, .integer(range), help: help)) { $0?.integer ?? range.lowerBound }
  }
}

extension Setting where Value == Int {
  /// A whole number in `range`.
  public static func integer(_ key: String, in range: ClosedRange<Int>, default value: Int, help: String)
    -> Setting<Int>
  {
    Setting(SettingSpec(key, .integer(range), default: .integer(value), help: help)) { $0?.integer ?? value }
  }
}

extension Setting where Value == Bool {
  /// `true` or `false`.
  public static func flag(_ key: String, default value: Bool, help: String) -> Setting<Bool> {
    Setting(SettingSpec(key, .flag, default: .flag(value), help: help)) { $0?.flag ?? value }
  }
}

extension Setting where Value == Duration {
  /// A duration (`500ms`, `10s`, `2m`, `1h`).
  public static func duration(_ key: String, default value: Duration, help: String) -> Setting<Duration> {
    Setting(SettingSpec(key, .duration, default: .duration(value), help: help)) { $0?.duration ?? value }
  }
}

extension Setting where Value == String {
  /// Free text.
  public static func text(_ key: String, default value: String, help: String) -> Setting<String> {
    Setting(SettingSpec(key, .text, default: .text(value), help: help)) { $0?.text ?? value }
  }

  /// One of `choices`.
  public static func choice(_ key: String, _ choices: [String], default value: String, help: String)
    -> Setting<String>
  {
    precondition(choices.contains(value), "the default of '\(key)' is not one of its choices")
    return Setting(SettingSpec(key, .choice(choices), default: .text(value), help: help)) { $0?.text ?? value }
  }
}

// Settings that are absent unless given: no default, `nil` when not set.

extension Setting where Value == Int? {
  /// A whole number in `range`, or nothing.
  public static func optionalInteger(_ key: String, in range: ClosedRange<Int>, help: String) -> Setting<Int?> {
    Setting(SettingSpec(key, .integer(range), help: help)) { $0?.integer }
  }
}

extension Setting where Value == Duration? {
  /// A duration, or nothing.
  public static func optionalDuration(_ key: String, help: String) -> Setting<Duration?> {
    Setting(SettingSpec(key, .duration, help: help)) { $0?.duration }
  }
}

extension Setting where Value == String? {
  /// Text, or nothing.
  public static func optionalText(_ key: String, help: String) -> Setting<String?> {
    Setting(SettingSpec(key, .text, help: help)) { $0?.text }
  }
}

extension Dictionary where Key == String, Value == SettingValue {
  /// The typed value of `setting` here (its declared default when absent).
  public subscript<V>(_ setting: Setting<V>) -> V { setting.value(in: self) }
}
