import ArgumentParser
import DoppelKit

/// A model's settings given on the command line as `--KEY VALUE` (or
/// `--KEY=VALUE`; a flag alone means true), checked against the settings the
/// model's binding declares: `advertise` takes the device's, `watch` the
/// client's.
enum SettingArguments {
  /// The binding of `model`, or a usage error that suggests the closest name and lists the models.
  static func binding(for model: String) throws -> any DeviceBinding.Type {
    guard let binding = DeviceCatalog.binding(for: model) else {
      let suggestion = ScenarioParser.closest(to: model, in: DeviceCatalog.models).map { " (did you mean '\($0)'?)" }
      throw ValidationError(
        "unknown device model '\(model)'\(suggestion ?? ""); known models: "
          + DeviceCatalog.models.joined(separator: ", "))
    }
    return binding
  }

  /// The settings `arguments` give, or a usage error that names the bad one
  /// and lists what `model` takes.
  static func parse(_ arguments: [String], specs: [SettingSpec], model: String) throws -> [String: SettingValue] {
    var values: [String: SettingValue] = [:]
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      guard argument.hasPrefix("--"), argument.count > 2 else {
        throw ValidationError("unexpected argument '\(argument)'")
      }
      var key = String(argument.dropFirst(2))
      var text: String?
      if let equals = key.firstIndex(of: "=") {
        text = String(key[key.index(after: equals)...])
        key = String(key[..<equals])
      }
      guard let spec = specs.first(where: { $0.key == key }) else {
        let known = specs.map { "--" + $0.key }
        let suggestion = ScenarioParser.closest(to: "--" + key, in: known).map { " (did you mean '\($0)'?)" } ?? ""
        throw ValidationError(
          "\(model) has no option '--\(key)'\(suggestion); it takes "
            + (known.isEmpty ? "none" : known.joined(separator: ", ")))
      }
      if text == nil {
        if case .flag = spec.kind, index == arguments.count || arguments[index].hasPrefix("--") {
          text = "true"
        } else if index < arguments.count {
          text = arguments[index]
          index += 1
        } else {
          throw ValidationError("--\(key) needs a value: \(spec.kind.expectation)")
        }
      }
      guard let text, let value = spec.value(parsing: text) else {
        throw ValidationError("--\(key) takes \(spec.kind.expectation), not '\(text ?? "")'")
      }
      values[key] = value
    }
    return values
  }

  /// Help listing every model's options from `specs` (its device or client
  /// settings), as `doppel help advertise` and `doppel help watch` show them.
  static func help(_ specs: (DeviceDescription) -> [SettingSpec]) -> String {
    DeviceCatalog.descriptions.map { description in
      let lines = specs(description).map { spec in
        "  --\(spec.key) <\(spec.kind.expectation)>\(spec.defaultValue.map { " (default \($0))" } ?? "")\n"
          + "        \(spec.help)"
      }
      return "\(description.model):\n" + (lines.isEmpty ? "  (none)" : lines.joined(separator: "\n"))
    }.joined(separator: "\n")
  }
}
