import ArgumentParser
import Capture
import DoppelKit
import Foundation

/// `doppel import CAPTURE [--device ADDRESS] -o DIR`: a peripheral in a
/// btsnoop capture becomes a scenario that replays it with the `generic` model.
struct ImportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "import",
    abstract: "Turn a peripheral in a btsnoop capture into a scenario that replays it.",
    discussion: """
      Reads btmon's captures (btmon -w, the lab's hci.btsnoop) and Android's btsnoop_hci.log, down to ATT, and \
      writes DIR/scenario.yaml, the profile it names (DIR/profile.yaml: advertising data, the GATT database from \
      the discovery responses, the values read), the peripheral's notifications and indications at their times \
      (DIR/notifications.csv) and the central's writes with their answers (DIR/writes.csv); the disconnection \
      is a timeline fault at the same moment. Without --device, it lists the peripherals and asks which one \
      (a usage error listing them when standard input is not a terminal). Exit status 0 when written, 1 for a \
      capture that cannot be read (the error names the record and its byte offset), 64 for a usage error.
      """)

  @OptionGroup var logging: LoggingOptions

  @Argument(help: "The btsnoop capture.")
  var capture: String

  @Option(help: "The peripheral's address, as the list shows it (00:AA:01:00:00:23).")
  var device: String?

  @Option(help: "Which of the peripheral's connections to import, from 1 (default: the first with notifications).")
  var connection: Int?

  @Option(name: [.short, .customLong("output")], help: "The folder to write the scenario into.")
  var output: String

  func validate() throws {
    if let device, DeviceAddress(device) == nil {
      throw ValidationError("--device takes an address like 00:AA:01:00:00:23, not '\(device)'")
    }
    if let connection, connection < 1 { throw ValidationError("--connection counts from 1") }
  }

  func run() throws {
    logging.bootstrap("import")
    // The capture and the files' text are gone before the check below reads the files back.
    let (report, scenario) = try importCapture()
    try ImportedScenario.checkWritten(scenario, by: "import")
    for line in report { print(line) }
    print("wrote \(scenario); replay it with: doppel e2e --loopback \(scenario)")
  }

  /// Reads the capture, writes the files, and returns what to print and the scenario's path.
  private func importCapture() throws -> (report: [String], scenario: String) {
    let read: Capture
    do {
      read = try Capture.read(path: capture)
    } catch {
      printError("\(capture): error: \(error)")
      throw ExitCode(1)
    }
    let peripheral = try choose(in: read)
    let imported: ImportedScenario
    do {
      imported = try ImportedScenario(
        peripheral: peripheral, connection: connection.map { $0 - 1 }, source: (capture as NSString).lastPathComponent)
    } catch {
      printError("\(capture): error: \(error)")
      throw ExitCode(1)
    }
    let scenario = try imported.writeFiles(into: output)
    return (
      [peripheral.summary] + imported.summary.map { "  \($0)" } + imported.notes.map { "  note: \($0)" }, scenario
    )
  }

  /// The peripheral `--device` names, the only one with ATT traffic, or the one the user picks.
  private func choose(in read: Capture) throws -> CapturedPeripheral {
    let talking = read.talkingPeripherals
    if let device, let address = DeviceAddress(device) {
      guard let peripheral = read.peripheral(address) else {
        throw ValidationError(
          "the capture has no peripheral \(address); it has:\n" + list(read.peripherals))
      }
      return peripheral
    }
    guard !talking.isEmpty else {
      let seen = read.peripherals.isEmpty ? "" : "; peripherals seen advertising:\n" + list(read.peripherals)
      printError(
        "\(capture): error: the capture has no ATT traffic (\(read.records) records, datalink \(read.datalink))\(seen)")
      throw ExitCode(1)
    }
    if talking.count == 1 { return talking[0] }
    guard isatty(0) == 1 else {
      throw ValidationError(
        "the capture has \(talking.count) peripherals with ATT traffic; choose one with --device:\n" + list(talking))
    }
    print("The capture has \(talking.count) peripherals with ATT traffic:")
    for (index, peripheral) in talking.enumerated() { print("  \(index + 1). \(peripheral.summary)") }
    while true {
      print("Which one (number or address)? ", terminator: "")
      guard let answer = readLine()?.trimmingCharacters(in: .whitespaces) else { throw ExitCode(64) }
      if let number = Int(answer), talking.indices.contains(number - 1) { return talking[number - 1] }
      if let address = DeviceAddress(answer), let peripheral = read.peripheral(address) { return peripheral }
      print("'\(answer)' is neither a number from 1 to \(talking.count) nor an address in the list.")
    }
  }

  private func list(_ peripherals: [CapturedPeripheral]) -> String {
    peripherals.map { "  \($0.summary)" }.joined(separator: "\n")
  }
}
