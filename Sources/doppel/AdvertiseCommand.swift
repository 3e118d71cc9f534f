import ArgumentParser
import BlueZ
import DBus

/// `doppel advertise MODEL`: host one emulated device until interrupted.
struct AdvertiseCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "advertise", abstract: "Host an emulated device on a Bluetooth adapter until interrupted (Ctrl-C).")

  @Argument(help: "The device model (see `doppel devices`).")
  var model: String

  @Option(help: "The adapter to host it on: hci name or address (default: the first).")
  var adapter: String?

  @Option(help: "Stop after this many seconds (default: run until interrupted).")
  var duration: Double?

  @OptionGroup var device: DeviceOptions

  func run() async throws {
    let entry = try DeviceModelCatalog.entry(model)
    let bus = try await DBusConnection.connect(to: .system)
    let adapter = try await BluetoothAdapter.find(self.adapter, on: bus)
    try await adapter.powerOn(on: bus)
    let peripheral = try await BlueZPeripheral.host(
      entry.make(device.configuration), on: adapter, bus: bus, name: "advertise0")
    let name = peripheral.model.advertisement.localName ?? model
    print("hosting \(model) as \"\(name)\" on \(adapter); Ctrl-C stops")
    await Interruption.wait(upTo: duration)
    await peripheral.stop()
    await bus.close()
    print("stopped")
  }
}
