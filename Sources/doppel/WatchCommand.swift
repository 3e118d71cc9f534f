import ArgumentParser
import BlendMicroClient
import BlueZ
import DBus
import GATT

/// `doppel watch`: the central side: find a device, connect, print its data live.
struct WatchCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "watch", abstract: "Find an emulated (or real) device, connect, and print its decoded data live.")

  @Option(help: "The adapter to scan from: hci name or address (default: the first).")
  var adapter: String?

  @Option(help: "The device model to look for (\(DeviceModelCatalog.names.joined(separator: ", "))).")
  var model: String = "blend-micro"

  @Option(help: "Only devices whose name starts with this.")
  var name: String?

  @Option(help: "Stop after this many seconds (default: until the device disconnects or Ctrl-C).")
  var duration: Double?

  @Option(help: "Give up finding and connecting after this many seconds.")
  var connectTimeout: Double = 60

  func run() async throws {
    _ = try DeviceModelCatalog.entry(model)
    let bus = try await DBusConnection.connect(to: .system)
    let adapter = try await BluetoothAdapter.find(self.adapter, on: bus)
    try await adapter.powerOn(on: bus)
    let client = BlendMicroClient(link: BlueZCentral(adapter: adapter, bus: bus))
    print("scanning on \(adapter) for \(model)…")
    let found = try await client.connect(namePrefix: name, timeout: .seconds(connectTimeout))
    print("connected to \(found.name ?? "?") (\(found.id)), rssi \(found.rssi)")
    let readings = try await client.readings()
    let printer = Task {
      var count = 0
      for try await reading in readings {
        count += 1
        switch reading {
        case .sample(let sample): print("\(sample.time)\t\(sample.amplitude)")
        case .malformed(let bytes, let time): print("\(time)\tMALFORMED \(bytes)")
        }
      }
      return count
    }
    let limit = Task {
      await Interruption.wait(upTo: duration)
      printer.cancel()
    }
    let outcome = await printer.result
    limit.cancel()
    await client.disconnect()
    await bus.close()
    if case .failure(let error) = outcome, !(error is CancellationError) {
      throw ValidationError("the stream ended: \(error)")
    }
  }
}
