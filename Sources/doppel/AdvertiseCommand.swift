import ArgumentParser
import DoppelKit

/// `doppel advertise MODEL`: host one emulated device until interrupted.
struct AdvertiseCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "advertise",
    abstract: "Host an emulated device on a Bluetooth adapter until interrupted (Ctrl-C).",
    discussion: """
      Each model takes its own settings as options, the same keys as a scenario's `config:`:

      \(SettingArguments.help(\.settings))
      """)

  @OptionGroup var logging: LoggingOptions

  @Argument(help: "The device model (\(DeviceCatalog.models.joined(separator: ", "))).")
  var model: String

  @Option(help: "The adapter to host it on: hci name or address (default: the first).")
  var adapter: String?

  @Option(help: "Stop after this many seconds (default: run until interrupted).")
  var duration: Double?

  @Option(help: "The advertised name (default: the model's own).")
  var name: String?

  @Option(help: "The serial number, for models that have one.")
  var serial: String?

  @Option(help: "Seed for the device's noise and random signals.")
  var seed: UInt64 = 1

  @Option(
    help: ArgumentHelp(
      "While no central is connected, register the advertisement anew every this many seconds (0: never).",
      discussion: """
        Virtual controllers (btvirt) show an advertisement to a scanner only when it is switched on, so \
        the default, 3, keeps the device findable in a lab; a real radio needs none. A copy goes on the \
        air before the old one comes off; none while a link the device ended is still up, then one at once.
        """))
  var advertisingRefresh: Double = 3

  @Argument(
    parsing: .allUnrecognized,
    help: ArgumentHelp("The model's settings: --KEY VALUE (see below).", valueName: "settings"))
  var settings: [String] = []

  func validate() throws {
    let binding = try SettingArguments.binding(for: model)
    _ = try SettingArguments.parse(settings, specs: binding.description.settings, model: model)
    if let name, name.isEmpty || name.utf8.count > 29 { throw ValidationError("--name must be 1…29 bytes") }
    if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
    if advertisingRefresh != 0, !(0.05...86_400).contains(advertisingRefresh) {
      throw ValidationError(
        "--advertising-refresh must be 0 (never) or 0.05 to 86400 seconds, not \(advertisingRefresh)")
    }
  }

  func run() async throws {
    logging.bootstrap("advertise")
    let specs = DeviceCatalog.binding(for: model)?.description.settings ?? []
    let binding = try DeviceCatalog.makeBinding(
      model: model, name: name, serial: serial, adapter: adapter,
      settings: try SettingArguments.parse(settings, specs: specs, model: model), seed: seed)
    let transport = BlueZTransport(
      adapters: adapter.map { [$0] },
      advertisingRefresh: advertisingRefresh > 0 ? .milliseconds(Int64(advertisingRefresh * 1000)) : nil)
    let hosted: any HostedDevice
    do {
      hosted = try await transport.host(binding.model, device: binding.device)
    } catch {
      await transport.shutdown()
      throw error
    }
    let name = binding.model.advertisement.localName ?? model
    let hostAdapter = await transport.hostAdapter(for: binding.device.id) ?? "?"
    print("hosting \(model) as \"\(name)\" on \(hostAdapter); Ctrl-C stops")
    await Interruption.wait(upTo: duration)
    await hosted.stop()
    await transport.shutdown()
    print("stopped")
  }
}
