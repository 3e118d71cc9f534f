import ArgumentParser
import DoppelKit

/// `doppel check FILE...`: validate scenario files.
struct CheckCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "check", abstract: "Check scenario files; print every problem with file:line:column.",
    discussion: "Exit status 0 when every file is valid, 2 when one is not.")

  @OptionGroup var logging: LoggingOptions

  @Argument(help: "Scenario files (YAML).")
  var files: [String]

  func validate() throws {
    if files.isEmpty { throw ValidationError("give at least one scenario file") }
  }

  func run() throws {
    logging.bootstrap("check")
    var invalid = 0
    for file in files {
      do {
        let scenario = try DeviceCatalog.parser.parse(file: file)
        // Building the devices reads their recordings: a missing or malformed one is found here too.
        let signals = SignalFactory(scenario: scenario)
        var problems = 0
        for device in scenario.devices {
          guard let binding = DeviceCatalog.binding(for: device.model) else { continue }
          do {
            _ = try binding.init(device: device, signals: signals)
          } catch {
            problems += 1
            printError("\(error)")
          }
        }
        if problems > 0 {
          invalid += 1
          continue
        }
        print(
          "\(file): ok — '\(scenario.name)', \(scenario.devices.count) device(s), "
            + "\(scenario.timeline.count) event(s), \(scenario.expectations.count) expectation(s)")
      } catch {
        invalid += 1
        printError("\(error)")
      }
    }
    if invalid > 0 { throw ExitCode(2) }
  }
}
