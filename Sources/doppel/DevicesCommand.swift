import ArgumentParser
import DoppelKit

/// `doppel devices`: the device models, their GATT profiles, and what
/// scenarios and the command line may say about them.
struct DevicesCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "devices",
    abstract: "List the emulated device models: their GATT profiles and what scenarios may say about them.",
    discussion: "With --markdown, the same as Markdown tables (docs/devices.md is made so).")

  @OptionGroup var logging: LoggingOptions

  @Flag(help: "Print Markdown (the settings tables of docs/devices.md).")
  var markdown = false

  func run() throws {
    logging.bootstrap("devices")
    for type in DeviceCatalog.bindings {
      let description = type.description
      let binding = try DeviceCatalog.makeBinding(model: description.model)
      if markdown {
        print(DeviceReference.markdown(description, model: binding.model))
      } else {
        print(DeviceReference.text(description, model: binding.model))
      }
    }
  }
}
