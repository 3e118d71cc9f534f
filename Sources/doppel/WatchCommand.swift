import ArgumentParser
import DoppelKit
import Foundation

/// `doppel watch`: the central side: find a device, connect with the
/// model's client stack, and print its decoded data live.
struct WatchCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "watch",
    abstract: "Find an emulated (or real) device, connect with its client stack, and print its decoded data live.",
    discussion: """
      Prints one line per sample (seconds, stream, value) and the client's events as they come; at the end, \
      what was received per stream. Each model's client takes its own settings as options, the same keys as a \
      scenario's `client:`:

      \(SettingArguments.help(\.clientSettings))
      """)

  @OptionGroup var logging: LoggingOptions

  @Option(help: "The adapter to scan from: hci name or address (default: the first that hosts no device).")
  var adapter: String?

  @Option(help: "The device model to look for (\(DeviceCatalog.models.joined(separator: ", "))).")
  var model: String = "blend-micro"

  @Option(help: "Only devices whose name starts with this.")
  var name: String?

  @Option(help: "The serial number to connect to, for models whose SDK connects by serial (actigraph-link).")
  var serial: String?

  @Option(help: "Stop after this many seconds (default: until Ctrl-C).")
  var duration: Double?

  @Argument(
    parsing: .allUnrecognized,
    help: ArgumentHelp("The model's client settings: --KEY VALUE (see below).", valueName: "client-settings"))
  var clientSettings: [String] = []

  func validate() throws {
    let binding = try SettingArguments.binding(for: model)
    _ = try SettingArguments.parse(clientSettings, specs: binding.description.clientSettings, model: model)
    if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
  }

  func run() async throws {
    logging.bootstrap("watch")
    let specs = DeviceCatalog.binding(for: model)?.description.clientSettings ?? []
    let binding = try DeviceCatalog.makeBinding(
      model: model, name: name, serial: serial,
      client: try SettingArguments.parse(clientSettings, specs: specs, model: model),
      directory: FileManager.default.currentDirectoryPath)
    let transport = BlueZTransport(centralAdapters: adapter.map { [$0] })
    let link: any CentralLink
    do {
      link = try await transport.centralLink(for: binding.device)
    } catch {
      await transport.shutdown()
      throw error
    }
    let scanner = await transport.clientAdapter(for: binding.device.id)?.name ?? adapter ?? "?"
    Self.emit("scanning on \(scanner) for \(model)\(name.map { " named \($0)" } ?? "")…")
    let observer = ClientObserver(
      clock: transport.clock, progress: Self.emit,
      live: { _, stream, time, value in Self.emit(String(format: "%10.3f\t%@\t%.9g", time, stream, value)) })
    let client = Task {
      await binding.runClient(ClientContext(link: link, clock: transport.clock, observer: observer))
    }
    await Interruption.wait(upTo: duration)
    client.cancel()
    await client.value
    await transport.shutdown()
    let observed = observer.observations[binding.device.id] ?? DeviceObservations()
    print("received:")
    for (stream, statistics) in observed.streams.sorted(by: { $0.key < $1.key }) {
      print(
        "  \(stream): \(statistics.count) samples"
          + (statistics.rate.map { String(format: ", %.1f/s", $0) } ?? "")
          + (statistics.mean.map { String(format: ", mean %.6g", $0) } ?? ""))
    }
    for (event, count) in observed.events.sorted(by: { $0.key < $1.key }) { print("  \(event): \(count)") }
    for (metric, value) in observed.metrics.sorted(by: { $0.key < $1.key }) {
      print(String(format: "  %@ = %.6g", metric, value))
    }
    if observed.events["connected", default: 0] == 0 {
      printError("doppel watch: never connected to a \(model)" + (observed.errors.first.map { ": \($0)" } ?? ""))
      throw ExitCode(1)
    }
  }

  /// Writes a line at once, unbuffered, so a pipe sees it live.
  private static func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }
}
