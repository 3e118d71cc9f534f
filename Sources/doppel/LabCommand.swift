import ArgumentParser
import Foundation

/// `doppel lab -- COMMAND`: runs COMMAND inside a fresh virtual BLE lab,
/// from any directory (a user's own repository), keeping the lab's
/// artifacts under that directory.
struct LabCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "lab",
    abstract: "Run COMMAND inside a fresh virtual BLE lab (virtual controllers, bluetoothd, a system D-Bus).",
    discussion: """
      COMMAND runs in the current directory with DOPPEL_ADAPTERS, DOPPEL_ARTIFACTS and the lab's \
      DBUS_SYSTEM_BUS_ADDRESS set; the lab's logs and HCI capture go to ./artifacts/lab-<time>/. Where the host \
      has no usable /dev/vhci the lab is a small VM (qemu, the distribution's kernel). The lab is the script \
      `ci/lab` of Doppel's checkout, installed by `ci/install` as PREFIX/share/doppel/lab; DOPPEL_LAB_SCRIPT \
      names another. Exit status: COMMAND's, or 124 (timed out), 125 (the lab could not start).
      """)

  @OptionGroup var logging: LoggingOptions

  @Option(name: .shortAndLong, help: "Virtual LE controllers to create.")
  var adapters: Int = 2

  @Option(help: "Controllers per air: only controllers of one air hear each other.")
  var air: Int?

  @Option(help: "Kill COMMAND after this many seconds.")
  var timeout: Int?

  @Argument(parsing: .postTerminator, help: "The command to run in the lab, after --.")
  var command: [String] = []

  func validate() throws {
    guard !command.isEmpty else { throw ValidationError("give the command to run after --, e.g. doppel lab -- pytest") }
    guard adapters >= 1 else { throw ValidationError("--adapters must be at least 1") }
  }

  func run() throws {
    logging.bootstrap("lab")
    guard let script = Self.labScript() else {
      printError(
        "doppel lab: the lab script is not installed: run ci/install from a Doppel checkout, or set DOPPEL_LAB_SCRIPT")
      throw ExitCode(125)
    }
    var arguments = [script, "--adapters", "\(adapters)"]
    if let air { arguments += ["--air", "\(air)"] }
    if let timeout { arguments += ["--timeout", "\(timeout)"] }
    arguments += ["--"] + command
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["DOPPEL_LAB_ROOT"] = FileManager.default.currentDirectoryPath
    process.environment = environment
    // The lab stops on SIGINT and SIGTERM itself; doppel waits for it.
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    try process.run()
    process.waitUntilExit()
    throw ExitCode(process.terminationStatus)
  }

  /// The lab script: DOPPEL_LAB_SCRIPT, PREFIX/share/doppel/lab beside an
  /// installed binary, or ci/lab of the checkout the binary was built in.
  static func labScript() -> String? {
    let files = FileManager.default
    if let named = ProcessInfo.processInfo.environment["DOPPEL_LAB_SCRIPT"] {
      return files.isReadableFile(atPath: named) ? named : nil
    }
    let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    let installed = binary.deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("share/doppel/lab").path
    if files.isReadableFile(atPath: installed) { return installed }
    var folder = binary.deletingLastPathComponent()
    while folder.path != "/" {
      let candidate = folder.appendingPathComponent("ci/lab").path
      if files.isReadableFile(atPath: candidate) { return candidate }
      folder = folder.deletingLastPathComponent()
    }
    return nil
  }
}
