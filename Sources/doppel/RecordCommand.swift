import ArgumentParser
import Capture
import DoppelKit
import Foundation

/// `doppel record (--name PREFIX | --address ADDRESS) --duration D -o DIR`:
/// a live device, recorded over BlueZ, becomes a scenario that replays it
/// with the `generic` model, as `doppel import` makes one from a capture.
struct RecordCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "record",
    abstract: "Record a live device over BlueZ as a scenario that replays it.",
    discussion: """
      Scans from the adapter for the device (by the start of its advertised name, or by its address), connects \
      with Doppel's own central, reads its GATT database and every readable value and descriptor, subscribes to \
      every characteristic that notifies or indicates, and records each value with its time for the duration. \
      Writes what `doppel import` writes: DIR/scenario.yaml, the profile it names (DIR/profile.yaml: the \
      advertising data the scan saw, the database, the values read) and the notifications and indications at \
      their times (DIR/notifications.csv). A value that cannot be read is declared without one (reads of it are \
      refused) and said so. When the link drops, the recording ends and the disconnection is a timeline fault at \
      that moment. Ctrl-C stops early and writes what was recorded. Exit status 0 when written, 1 when no device \
      was found, the connection or the link failed, or DIR cannot be written, 64 for a usage error.
      """)

  @OptionGroup var logging: LoggingOptions

  @Option(help: "The adapter to scan and connect from: hci name or address (default: the first).")
  var adapter: String?

  @Option(help: "Record the device whose advertised name starts with this.")
  var name: String?

  @Option(help: "Record the device at this address (00:AA:01:00:00:23).")
  var address: String?

  @Option(help: "How long to record: seconds, or a duration such as 500ms, 90s, 2m.")
  var duration: String

  @Option(help: "How long to scan for the device, in seconds.")
  var scanTimeout: Double = 20

  @Option(name: [.short, .customLong("output")], help: "The folder to write the scenario into.")
  var output: String

  func validate() throws {
    switch (name, address) {
    case (nil, nil): throw ValidationError("say which device to record: --name PREFIX or --address ADDRESS")
    case (.some, .some): throw ValidationError("--name and --address both choose the device: give one of them")
    default: break
    }
    if let address, DeviceAddress(address) == nil {
      throw ValidationError("--address takes an address like 00:AA:01:00:00:23, not '\(address)'")
    }
    guard Self.parse(duration) != nil else {
      throw ValidationError(
        "--duration must be more than 0: seconds, or a duration such as 500ms, 90s, 2m; not '\(duration)'")
    }
    if !(scanTimeout > 0) { throw ValidationError("--scan-timeout must be a positive number of seconds") }
  }

  /// A positive duration: plain seconds, or as scenarios write durations.
  static func parse(_ text: String) -> Duration? {
    let parsed = Double(text).flatMap { $0.isFinite && $0 < 1e9 ? Duration.milliseconds(Int64($0 * 1000)) : nil }
    guard let duration = parsed ?? ScenarioDuration.parse(text), duration > .zero else { return nil }
    return duration
  }

  func run() async throws {
    logging.bootstrap("record")
    // Before the radio: a recording that could not be written is not made.
    let made = !FileManager.default.fileExists(atPath: output)
    do {
      try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
      guard FileManager.default.isWritableFile(atPath: output) else {
        throw CocoaError(.fileWriteNoPermission)
      }
    } catch {
      printError("cannot write into \(output): \(error.localizedDescription)")
      throw ExitCode(1)
    }
    let duration = Self.parse(duration) ?? .zero
    let target: LiveRecorder.Target = name.map { .name($0) } ?? .address(address ?? "")
    let transport = BlueZTransport()
    let central: (link: any CentralLink, adapter: String)
    do {
      central = try await transport.central(on: adapter)
    } catch {
      await transport.shutdown()
      removeFolder(made)
      printError("doppel record: error: \(error)")
      throw ExitCode(1)
    }
    let recorder = LiveRecorder(
      link: central.link, clock: transport.clock, place: central.adapter,
      scanLimit: .milliseconds(Int64(scanTimeout * 1000)))
    let source = "at " + ISO8601DateFormatter().string(from: Date())
    let recording = Task {
      try await recorder.record(target, for: duration, source: source, progress: Self.emit)
    }
    // Ctrl-C stops the recording early; what was recorded is still written.
    Task {
      await Interruption.wait(upTo: nil)
      Self.emit("interrupted: stopping the recording")
      recording.cancel()
    }
    let recorded: LiveRecording
    do {
      recorded = try await recording.value
    } catch {
      await transport.shutdown()
      removeFolder(made)
      printError("doppel record: error: \(error)")
      throw ExitCode(1)
    }
    await transport.shutdown()
    let scenario = try recorded.scenario.writeFiles(into: output)
    try ImportedScenario.checkWritten(scenario, by: "record")
    let seconds = String(format: "%.3f", recorded.recorded.seconds)
    switch recorded.ending {
    case .elapsed: print("recorded \(recorded.peripheral.id) for \(seconds) s")
    case .linkEnded(let reason):
      print("recorded \(recorded.peripheral.id) for \(seconds) s, until the link ended (\(reason))")
    case .interrupted: print("recorded \(recorded.peripheral.id) for \(seconds) s, stopped early")
    }
    for line in recorded.scenario.summary { print("  \(line)") }
    for note in recorded.scenario.notes { print("  note: \(note)") }
    print("wrote \(scenario); replay it with: doppel e2e --loopback \(scenario)")
  }

  /// Removes the output folder when this run made it: nothing was recorded into it.
  private func removeFolder(_ made: Bool) {
    if made { try? FileManager.default.removeItem(atPath: output) }
  }

  /// Writes a line at once, unbuffered, so a pipe sees it live.
  private static func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }
}
