import ArgumentParser
@preconcurrency import Glibc

/// The `doppel` command-line tool.
@main
struct Doppel: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "doppel",
    abstract: "Emulated BLE peripherals on BlueZ, their client stacks, and the scenarios that drive them.",
    version: DoppelVersion.current,
    subcommands: [
      DevicesCommand.self, AdvertiseCommand.self, WatchCommand.self, CheckCommand.self, RunCommand.self,
      EndToEndCommand.self, TestCommand.self, ImportCommand.self, RecordCommand.self, LabCommand.self,
    ]
  )

  /// Parses the command line; for `test`, what follows `--` is the central's
  /// command, passed on word for word.
  static func main() async {
    // Line by line even into a file or a pipe: whoever reads doppel's output
    // (a CI log, a script waiting for "hosting …") sees each line as it happens.
    setvbuf(stdout, nil, _IOLBF, 0)
    await main(Self.centralAsOptions(Array(CommandLine.arguments.dropFirst())))
  }

  static func centralAsOptions(_ arguments: [String]) -> [String] {
    guard arguments.first == "test", let split = arguments.firstIndex(of: "--") else { return arguments }
    return Array(arguments[..<split]) + arguments[(split + 1)...].flatMap { ["--central", $0] }
  }
}
