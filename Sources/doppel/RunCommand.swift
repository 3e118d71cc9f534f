import ArgumentParser
import DoppelKit

/// `doppel run FILE`: host a scenario's devices and play its timeline.
struct RunCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "run",
    abstract: "Host a scenario's devices on their adapters and play its timeline until it ends (or Ctrl-C).",
    discussion: "Exit status 2 when the scenario is invalid.")

  @OptionGroup var logging: LoggingOptions

  @Argument(help: "The scenario file (YAML; see Scenarios/README.md).")
  var file: String

  @OptionGroup var options: TransportOptions

  func run() async throws {
    logging.bootstrap("run")
    let scenario: Scenario
    do {
      scenario = try DeviceCatalog.parser.parse(file: file)
    } catch {
      printError(error.description)
      throw ExitCode(2)
    }
    let runner = ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings) { print($0) }
    let transport = options.transport()
    let task = Task { try await runner.run(on: transport, mode: .host) }
    let interrupted = Task {
      await Interruption.wait(upTo: nil)
      task.cancel()
    }
    do {
      let report = try await task.value
      interrupted.cancel()
      ScenarioSummary.print(report, scenario: scenario)
    } catch let error as ScenarioError {
      printError(error.description)
      throw ExitCode(2)
    } catch is CancellationError {
      print("stopped")
    }
  }
}
