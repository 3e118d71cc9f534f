import DoppelKit

/// A device model's reference — its profile and its scenario vocabulary —
/// as `doppel devices` prints it, in text or Markdown, from the binding's
/// one declaration.
enum DeviceReference {
  /// What a device entry's `profile:` holds, for the models that take one.
  static let profileHelp =
    "a mapping, or the path of a profile file holding it: services, advertising, replay, responses"
    + " (docs/generic.md)"

  static func text(_ description: DeviceDescription, model: any PeripheralModel) -> String {
    var lines = ["\(description.model): \(description.summary)"]
    let advertisement = model.advertisement
    lines.append(
      "  advertises: \(advertisement.localName ?? "(no name)") "
        + advertisement.serviceUUIDs.map(\.uuidString).joined(separator: " "))
    for service in model.profile.services {
      lines.append("  service \(service.uuid.uuidString)\(service.name.map { " (\($0))" } ?? "")")
      for characteristic in service.characteristics {
        lines.append(
          "    characteristic \(characteristic.uuid.uuidString) (\(characteristic.name)) "
            + "[\(characteristic.properties.bluezFlags.joined(separator: ", "))] as "
            + model.profile.characteristicKey(
              at: CharacteristicAddress(service: service.uuid, characteristic: characteristic.uuid)))
      }
    }
    func line(_ spec: SettingSpec) -> String {
      "      \(spec.key): \(spec.kind.expectation)\(spec.defaultValue.map { " (default \($0))" } ?? "") — \(spec.help)"
    }
    lines.append("  in scenarios:")
    if description.declaresProfile {
      lines.append("    profile: \(profileHelp)")
    }
    if !description.settings.isEmpty {
      lines.append("    config:")
      lines += description.settings.map(line)
    }
    lines.append("    streams:")
    lines += description.streams.map { "      \($0.name) (\($0.unit)) — \($0.help)" }
    if !description.actions.isEmpty {
      lines.append("    actions:")
      for action in description.actions {
        let parameters = action.parameters.map(\.key).joined(separator: ", ")
        lines.append("      \(action.name)\(parameters.isEmpty ? "" : " (\(parameters))") — \(action.help)")
      }
    }
    if !description.clientSettings.isEmpty {
      lines.append("    client:")
      lines += description.clientSettings.map(line)
    }
    lines.append("    metrics: \(description.metrics.joined(separator: ", "))")
    if !description.firmwareEvents.isEmpty {
      lines.append("    firmware events: \(description.firmwareEvents.joined(separator: ", "))")
    }
    lines.append("    events: \((DeviceDescription.commonEvents + description.events).joined(separator: ", "))")
    return lines.joined(separator: "\n")
  }

  static func markdown(_ description: DeviceDescription, model: any PeripheralModel) -> String {
    func cell(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
    func table(_ specs: [SettingSpec]) -> [String] {
      ["| key | value | default | meaning |", "|---|---|---|---|"]
        + specs.map { spec in
          "| `\(spec.key)` | \(cell(spec.kind.expectation)) | \(spec.defaultValue.map { "`\($0)`" } ?? "—") "
            + "| \(cell(spec.help)) |"
        }
    }
    var lines = ["## `\(description.model)`", "", description.summary, ""]
    lines.append(
      "Advertises as \"\(model.advertisement.localName ?? "")\" with "
        + (model.advertisement.serviceUUIDs.isEmpty
          ? "no service UUIDs"
          : model.advertisement.serviceUUIDs.map { "`\($0.uuidString)`" }.joined(separator: ", ")) + ".")
    if description.declaresProfile {
      lines += ["", "Profile (`profile:` in scenarios): \(profileHelp). Without one:"]
    }
    lines += ["", "| service / characteristic | in scenarios | UUID | properties |", "|---|---|---|---|"]
    for service in model.profile.services {
      lines.append("| \(cell(service.name ?? "service")) | | `\(service.uuid.uuidString)` | |")
      for characteristic in service.characteristics {
        let key = model.profile.characteristicKey(
          at: CharacteristicAddress(service: service.uuid, characteristic: characteristic.uuid))
        lines.append(
          "| ↳ \(cell(characteristic.name)) | `\(key)` | `\(characteristic.uuid.uuidString)` | "
            + characteristic.properties.bluezFlags.joined(separator: ", ") + " |")
      }
    }
    if !description.settings.isEmpty {
      lines += ["", "Device settings (`config:` in scenarios, `--KEY VALUE` on `doppel advertise`):", ""]
      lines += table(description.settings)
    }
    lines += ["", "Streams:", "", "| stream | unit | meaning |", "|---|---|---|"]
    lines += description.streams.map { "| `\($0.name)` | \(cell($0.unit)) | \(cell($0.help)) |" }
    if !description.actions.isEmpty {
      lines += ["", "Timeline actions:", "", "| action | parameters | meaning |", "|---|---|---|"]
      for action in description.actions {
        let parameters = action.parameters.map { "`\($0.key)`: \(cell($0.kind.expectation))" }
        lines.append(
          "| `\(action.name)` | \(parameters.isEmpty ? "—" : parameters.joined(separator: "; ")) | \(cell(action.help)) |"
        )
      }
    }
    if !description.clientSettings.isEmpty {
      lines += ["", "Client settings (`client:` in scenarios, `--KEY VALUE` on `doppel watch`):", ""]
      lines += table(description.clientSettings)
    }
    lines += [
      "", "Metrics: " + description.metrics.map { "`\($0)`" }.joined(separator: ", ") + ".",
      "Events: " + (DeviceDescription.commonEvents + description.events).map { "`\($0)`" }.joined(separator: ", ")
        + ".",
    ]
    if !description.firmwareEvents.isEmpty {
      lines.append(
        "Firmware events (device-side, any central; for `firmware-event` checks and `after:` triggers): "
          + description.firmwareEvents.map { "`\($0)`" }.joined(separator: ", ") + ".")
    }
    lines.append("")
    return lines.joined(separator: "\n")
  }
}
