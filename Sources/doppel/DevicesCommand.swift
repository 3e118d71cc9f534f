import ArgumentParser
import GATT

/// `doppel devices`: the device models and their GATT profiles.
struct DevicesCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "devices", abstract: "List the emulated device models and their GATT profiles.")

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
    }
  }
}
