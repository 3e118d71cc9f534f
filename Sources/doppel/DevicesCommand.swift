import ArgumentParser
import DoppelKit
import GATT
import Scenario

/// `doppel devices`: the device models and their GATT profiles.
struct DevicesCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "devices",
    abstract: "List the emulated device models: their GATT profiles and what scenarios may say about them.")

  func run() throws {
    for entry in DeviceModelCatalog.entries {
      let model = entry.make(DeviceConfiguration())
      print("\(entry.name): \(entry.summary)")
      let advertisement = model.advertisement
      print(
        "  advertises: \(advertisement.localName ?? "(no name)") \(advertisement.serviceUUIDs.map(\.uuidString).joined(separator: " "))"
      )
      for service in model.profile.services {
        print("  service \(service.uuid.uuidString)\(service.name.map { " (\($0))" } ?? "")")
        for characteristic in service.characteristics {
          print(
            "    characteristic \(characteristic.uuid.uuidString) (\(characteristic.name)) [\(characteristic.properties.bluezFlags.joined(separator: ", "))]"
          )
        }
      }
      if let description = DeviceCatalog.descriptions.first(where: { $0.model == entry.name }) {
        printScenarioVocabulary(description)
      }
    }
  }

  /// What a scenario's device entry may say for this model.
  private func printScenarioVocabulary(_ description: DeviceDescription) {
    func line(_ spec: SettingSpec) -> String {
      "      \(spec.key): \(spec.kind.expectation)\(spec.defaultValue.map { " (default \($0))" } ?? "") — \(spec.help)"
    }
    print("  in scenarios:")
    if !description.settings.isEmpty {
      print("    config:")
      for spec in description.settings { print(line(spec)) }
    }
    print("    streams:")
    for stream in description.streams { print("      \(stream.name) (\(stream.unit)) — \(stream.help)") }
    if !description.actions.isEmpty {
      print("    actions:")
      for action in description.actions {
        let parameters = action.parameters.map(\.key).joined(separator: ", ")
        print("      \(action.name)\(parameters.isEmpty ? "" : " (\(parameters))") — \(action.help)")
      }
    }
    if !description.clientSettings.isEmpty {
      print("    client:")
      for spec in description.clientSettings { print(line(spec)) }
    }
    print("    metrics: \(description.metrics.joined(separator: ", "))")
    print("    events: \((DeviceDescription.commonEvents + description.events).joined(separator: ", "))")
  }
}
