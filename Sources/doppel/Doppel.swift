import ArgumentParser

/// The `doppel` command-line tool.
@main
struct Doppel: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "doppel",
    abstract: "Emulated BLE peripherals on BlueZ, their client stacks, and the scenarios that drive them.",
    version: DoppelVersion.current,
    subcommands: [
      DevicesCommand.self, AdvertiseCommand.self, WatchCommand.self, CheckCommand.self, RunCommand.self,
      EndToEndCommand.self, TestCommand.self,
    ]
  )
}
