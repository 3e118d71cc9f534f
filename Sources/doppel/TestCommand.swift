import ArgumentParser
import DoppelKit
import Foundation
import Synchronization

/// `doppel test SCENARIO -- COMMAND…`: hold any central to a scenario. The
/// scenario's devices are hosted over BlueZ, COMMAND runs as the central, the
/// timeline plays, and the device-side expectations judge what the devices
/// saw it do.
struct TestCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "test",
    abstract: "Host a scenario's devices over BlueZ, run COMMAND as their central, and check what the devices saw.",
    usage: "doppel test [<options>] <scenario-or-folder> ... -- COMMAND [ARG ...]",
    discussion: """
      COMMAND starts once every device is hosted, with these environment variables:
        DOPPEL_CENTRAL_ADAPTER          the adapter kept free for the central (hci name)
        DOPPEL_CENTRAL_ADAPTER_ADDRESS  its address
        DOPPEL_DEVICES                  the scenario's device ids, space separated
        DOPPEL_DEVICE_<ID>_NAME, _ADDRESS, _MODEL   for each device (<ID> upper-case, '-' as '_')
        DOPPEL_DEVICE_NAME, _ADDRESS, _MODEL        the first device's, for one-device scenarios
      The run ends when COMMAND exits or the scenario ends (then COMMAND is stopped). Its output is printed \
      with the prefix 'central│ '. Only device-side expectations are checked (central-*, no-att-errors, \
      firmware-event); client-side ones need `doppel e2e`. Folders run every scenario inside, COMMAND once \
      for each; --shard K/N runs every Nth of them (for a CI job matrix). Exit status 0 when COMMAND exited 0 \
      and every expectation held, 1 otherwise, 2 when a scenario or COMMAND is invalid.
      """)

  @OptionGroup var logging: LoggingOptions

  @OptionGroup var selection: ScenarioSelection

  @OptionGroup var options: TransportOptions

  @OptionGroup var output: ReportOptions

  /// The central's command line: what follows `--` (``Doppel/main()`` turns
  /// each word into one `--central` option, since the scenarios before it
  /// are a list of their own).
  @Option(
    name: .customLong("central"), parsing: .unconditionalSingleValue,
    help: ArgumentHelp("The central to run: give it after --, as `-- COMMAND ARGS…`.", visibility: .hidden))
  var command: [String] = []

  func run() async throws {
    logging.bootstrap("test")
    let scenarios = try selection.load()
    if options.loopback {
      printError(
        "doppel test: --loopback cannot run an outside central: it needs BlueZ (run it in the lab: ci/lab -- doppel test …)"
      )
      throw ExitCode(2)
    }
    let program: CentralProgram
    do {
      program = try CentralProgram(command)
    } catch {
      printError("doppel test: \(error)")
      throw ExitCode(2)
    }
    var outcomes: [(report: ScenarioReport, central: JUnitReport.Case, passed: Bool)] = []
    for scenario in scenarios {
      outcomes.append(try await test(scenario, program: program, count: scenarios.count))
    }
    if let junit = output.junit {
      let xml = JUnitReport.xml(outcomes.map(\.report), name: "doppel test", extra: outcomes.map { [$0.central] })
      do {
        try xml.write(toFile: junit, atomically: true, encoding: .utf8)
      } catch {
        printError("cannot write the JUnit report to \(junit): \(error.localizedDescription)")
        throw ExitCode.failure
      }
    }
    if let report = output.report {
      try ReportFile.write(
        HTMLReport.page(outcomes.map(\.report), title: "doppel test: \(command.joined(separator: " "))"), to: report)
    }
    let failed = outcomes.filter { !$0.passed }.count
    if scenarios.count > 1 { print("test: \(outcomes.count - failed) of \(outcomes.count) scenarios passed") }
    if failed > 0 { throw ExitCode.failure }
  }

  /// One scenario with a fresh start of the central.
  private func test(_ scenario: Scenario, program template: CentralProgram, count: Int) async throws
    -> (report: ScenarioReport, central: JUnitReport.Case, passed: Bool)
  {
    let program = try CentralProgram(template.arguments)
    let deviceSide = scenario.expectations.filter(\.check.isDeviceSide)
    let clientSide = scenario.expectations.count - deviceSide.count
    Self.emit("test: '\(scenario.name)' over BlueZ, central: \(command.joined(separator: " "))")
    if clientSide > 0 {
      Self.emit(
        "test: \(clientSide) client-side expectation(s) are not checked here: they judge Doppel's own client (doppel e2e)"
      )
    }
    let transport = options.bluezTransport()
    let interrupted = Atomic<Bool>(false)
    let interruption = Task {
      await Interruption.wait(upTo: nil)
      interrupted.store(true, ordering: .releasing)
    }
    defer { interruption.cancel() }
    let runner = ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings) { Self.emit($0) }
    let report: ScenarioReport
    do {
      report = try await runner.run(
        on: transport, mode: .external,
        hosted: { devices in
          let environment = try await Self.environment(for: devices, transport: transport)
          for (key, value) in environment.sorted(by: { $0.key < $1.key }) { Self.emit("test: \(key)=\(value)") }
          try program.start(environment: environment)
        },
        stopWhen: { program.hasEnded || interrupted.load(ordering: .acquiring) })
    } catch let error as ScenarioError {
      _ = await program.finish()
      printError(error.description)
      throw ExitCode(2)
    } catch {
      _ = await program.finish()
      throw error
    }
    let outcome = await program.finish()
    if interrupted.load(ordering: .acquiring) { Self.emit("test: interrupted (Ctrl-C); what was observed until then:") }
    ScenarioSummary.print(report, scenario: scenario)
    let central = "central '\(command.joined(separator: " "))' \(outcome.description)"
    print("  \(outcome.succeeded ? "PASS" : "FAIL") \(central)")
    let passed = report.passed && outcome.succeeded && !interrupted.load(ordering: .acquiring)
    print("test: \(passed ? "PASS" : "FAIL")\(count > 1 ? " \(scenario.file)" : "")")
    return (
      report,
      JUnitReport.Case(
        name: "the central: \(command.joined(separator: " "))", passed: outcome.succeeded, message: central), passed
    )
  }

  /// Where the central should look: its adapter, and each device's name and address.
  static func environment(for devices: [ScenarioRunner.HostedDeviceInfo], transport: BlueZTransport) async throws
    -> [String: String]
  {
    var environment: [String: String] = [:]
    guard let first = devices.first else { return environment }
    // Keeps an adapter that hosts no device for the central.
    _ = try await transport.centralLink(for: first.spec)
    if let adapter = await transport.clientAdapter(for: first.id) {
      environment["DOPPEL_CENTRAL_ADAPTER"] = adapter.name
      environment["DOPPEL_CENTRAL_ADAPTER_ADDRESS"] = adapter.address
    }
    environment["DOPPEL_DEVICES"] = devices.map(\.id).joined(separator: " ")
    for (index, device) in devices.enumerated() {
      let address = await transport.hostAdapterAddress(for: device.id) ?? ""
      let key = device.id.uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
      var values = ["NAME": device.name, "MODEL": device.model, "ADDRESS": address]
      if let serial = device.spec.serial { values["SERIAL"] = serial }
      for (field, value) in values {
        environment["DOPPEL_DEVICE_\(key)_\(field)"] = value
        if index == 0 { environment["DOPPEL_DEVICE_\(field)"] = value }
      }
    }
    return environment
  }

  /// A line at once, unbuffered, so it keeps its place among the central's output.
  static func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }
}
