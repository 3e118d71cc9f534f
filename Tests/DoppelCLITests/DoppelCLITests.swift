import Foundation
import Testing

/// Runs the built `doppel` binary, as a user would.
@Suite struct DoppelCLITests {
  typealias Outcome = ProgramOutcome

  /// The `doppel` next to this test bundle (`swift build` puts both in one folder).
  static let binary: URL = {
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var folder = me.deletingLastPathComponent()
    while folder.path != "/" && !FileManager.default.fileExists(atPath: folder.appendingPathComponent("doppel").path) {
      folder = folder.deletingLastPathComponent()
    }
    return folder.appendingPathComponent("doppel")
  }()

  func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Outcome {
    try ProgramOutcome.run(Self.binary, arguments, environment: environment)
  }

  @Test func versionAndHelp() throws {
    let version = try run(["--version"])
    #expect(version.status == 0)
    #expect(version.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
    let help = try run(["--help"])
    #expect(help.status == 0)
    for verb in ["devices", "advertise", "watch", "check", "run", "e2e"] {
      #expect(help.output.contains(verb), "help lacks \(verb)")
    }
  }

  @Test func devicesListsTheBlendMicroProfile() throws {
    let devices = try run(["devices"])
    #expect(devices.status == 0)
    #expect(devices.output.contains("blend-micro"))
    #expect(devices.output.contains("713d0002-503e-4c75-ba94-3148f18d941e (UART TX) [notify]"))
    #expect(devices.output.contains("713d0003-503e-4c75-ba94-3148f18d941e (UART RX) [write-without-response]"))
  }

  @Test func unknownModelIsAUsageErrorNamingTheKnownOnes() throws {
    let outcome = try run(["advertise", "emstat-pic0"])
    #expect(outcome.status == 64)
    #expect(outcome.error.contains("unknown device model 'emstat-pic0'"))
    #expect(outcome.error.contains("blend-micro"))
  }

  @Test func badOptionValuesAreRejected() throws {
    let outcome = try run(["advertise", "blend-micro", "--heart-rate", "400"])
    #expect(outcome.status == 64)
    #expect(outcome.error.contains("--heart-rate takes a number from 20.0 to 250.0, not '400'"))
    let kind = try run(["advertise", "emstat-pico", "--cell=capacitor"])
    #expect(kind.status == 64)
    #expect(kind.error.contains("--cell takes one of resistor, series-rc, randles, open, not 'capacitor'"))
    let refresh = try run(["advertise", "blend-micro", "--advertising-refresh", "0.01"])
    #expect(refresh.status == 64)
    #expect(refresh.error.contains("--advertising-refresh must be 0 (never) or 0.05 to 86400 seconds, not 0.01"))
  }

  /// `advertise` takes each model's own settings, declared once by its binding.
  @Test func advertiseOptionsComeFromTheModelsSettings() throws {
    let misspelt = try run(["advertise", "e4", "--battery-drian", "0.1"])
    #expect(misspelt.status == 64)
    #expect(misspelt.error.contains("e4 has no option '--battery-drian' (did you mean '--battery-drain'?)"))
    // Another model's setting is not this one's.
    let foreign = try run(["advertise", "e4", "--heart-rate", "60"])
    #expect(foreign.status == 64)
    #expect(foreign.error.contains("e4 has no option '--heart-rate'"))
    let missing = try run(["advertise", "blend-micro", "--noise"])
    #expect(missing.status == 64)
    #expect(missing.error.contains("--noise needs a value"))
    let help = try run(["help", "advertise"])
    #expect(help.status == 0)
    for option in ["--sample-rate", "--battery-drain", "--raw-rate", "--notification-payload"] {
      #expect(help.output.contains(option), "advertise's help lacks \(option)")
    }
  }

  /// `watch` takes each model's client settings, and refuses what the model's client does not have.
  @Test func watchOptionsComeFromTheClientsSettings() throws {
    let help = try run(["help", "watch"])
    #expect(help.status == 0)
    for option in ["--kardia-relay", "--authentication", "--stream-raw", "--script-file", "--abort-after"] {
      #expect(help.output.contains(option), "watch's help lacks \(option)")
    }
    let wrong = try run(["watch", "--model", "emstat-pico", "--authentication", "refuse"])
    #expect(wrong.status == 64)
    #expect(wrong.error.contains("emstat-pico has no option '--authentication'"))
    let unknown = try run(["watch", "--model", "e5"])
    #expect(unknown.status == 64)
    #expect(unknown.error.contains("unknown device model 'e5' (did you mean 'e4'?)"))
  }

  /// docs/devices.md is what `doppel devices --markdown` prints: the docs'
  /// tables come from the bindings' declarations, and cannot drift.
  @Test func theDevicesReferenceIsGeneratedFromTheBindings() throws {
    let generated = try run(["devices", "--markdown"])
    #expect(generated.status == 0)
    let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("docs/devices.md")
    let text = try String(contentsOf: docs, encoding: .utf8)
    let marker = "<!-- generated by `doppel devices --markdown` -->\n"
    let body = try #require(text.range(of: marker)).upperBound
    #expect(
      String(text[body...]) == generated.output,
      "docs/devices.md is out of date: regenerate its tables with `doppel devices --markdown`")
  }

  @Test func checkReportsEveryProblemWithItsPlaceAndExitsTwo() throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("doppel-cli-\(getpid()).yaml").path
    try """
    scenario: broken
    devices:
      - id: board
        model: blend-micro
        config: {sample-rat: 100}
    duration: 10
    """.write(toFile: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: file) }
    let outcome = try run(["check", file])
    #expect(outcome.status == 2)
    #expect(outcome.error.contains("\(file):5:14: error: unknown key 'sample-rat'"))
    #expect(outcome.error.contains("did you mean 'sample-rate'?"))
    #expect(outcome.error.contains("\(file):6:11: error: 'duration' must be a duration"))
    let e2e = try run(["e2e", "--loopback", file])
    #expect(e2e.status == 2, "an invalid scenario must not run")
  }

  @Test func checkReadsTheRecordingsAScenarioReplays() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("doppel-cli-rec-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try "time,mV\n0,1\n0.1,abc\n".write(
      to: folder.appendingPathComponent("lead.csv"), atomically: true, encoding: .utf8)
    let file = folder.appendingPathComponent("replay.yaml").path
    try """
    scenario: replay
    devices:
      - id: board
        model: blend-micro
        streams:
          ecg: {csv: {file: lead.csv, column: mV}}
    expect:
      - no-errors: true
    """.write(toFile: file, atomically: true, encoding: .utf8)
    let outcome = try run(["check", file])
    #expect(outcome.status == 2)
    #expect(outcome.error.contains("lead.csv:3:5: error: 'mV' is not a number (expected a number, found 'abc')"))
  }

  @Test func scenarioFilesCheckAndTheQuickStartPassesInTheLoopback() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let quickStart = root.appendingPathComponent("Scenarios/blend-micro/quick-start.yaml").path
    let check = try run(["check", quickStart])
    #expect(check.status == 0, "\(check.error)")
    let e2e = try run(["e2e", "--loopback", quickStart])
    #expect(e2e.status == 0, "\(e2e.output)\(e2e.error)")
    #expect(e2e.output.contains("e2e: PASS"))
    #expect(e2e.output.contains("PASS board: heart-rate"))
  }

  @Test func noBlueZIsAClearErrorNotAHang() throws {
    let outcome = try run(
      ["advertise", "blend-micro"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/doppel-test-bus"])
    #expect(outcome.status == 1)
    #expect(outcome.error.contains("cannot connect to system bus"))
    #expect(outcome.error.contains("/nonexistent/doppel-test-bus"))
  }

  /// `doppel test` refuses what cannot work before it hosts anything.
  @Test func testRefusesAMissingCentralAndTheLoopback() throws {
    let scenario = "Examples/scenarios/e4-bleak.yaml"
    let missing = try run(["test", scenario, "--", "no-such-central-program", "--flag"])
    #expect(missing.status == 2)
    #expect(missing.error.contains("'no-such-central-program' is not a program on PATH"))
    let none = try run(["test", scenario])
    #expect(none.status == 2)
    #expect(none.error.contains("give the central to run after --"))
    let loopback = try run(["test", "--loopback", scenario, "--", "true"])
    #expect(loopback.status == 2)
    #expect(loopback.error.contains("--loopback cannot run an outside central"))
    let notExecutable = try run(["test", scenario, "--", "README.md"])
    #expect(notExecutable.status == 2)
    let invalid = try run(["test", "Tests/ScenarioTests/Malformed/51-unknown-characteristic.yaml", "--", "true"])
    #expect(invalid.status == 2)
  }

  /// `--shard K/N` splits a folder of scenarios: every Nth, from the Kth.
  @Test func e2eRunsOneShardOfAFolder() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("doppel-shard-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    for name in ["a", "b", "c"] {
      try """
      scenario: shard-\(name)
      duration: 2s
      devices:
        - id: board
          model: blend-micro
      expect:
        - connected-within: 2s
      """.write(to: folder.appendingPathComponent("\(name).yaml"), atomically: true, encoding: .utf8)
    }
    let second = try run(["e2e", "--loopback", "--shard", "2/2", folder.path])
    #expect(second.status == 0, "\(second.error)")
    #expect(second.output.contains("'shard-b'"))
    #expect(!second.output.contains("'shard-a'") && !second.output.contains("'shard-c'"))
    #expect(second.output.contains("1 of 1 scenarios passed") || second.output.contains("e2e: PASS"))
    let first = try run(["e2e", "--loopback", "--shard", "1/2", folder.path])
    #expect(first.output.contains("'shard-a'") && first.output.contains("'shard-c'"))
    #expect(first.output.contains("2 of 2 scenarios passed"))
    let bad = try run(["e2e", "--loopback", "--shard", "3/2", folder.path])
    #expect(bad.status == 64)
    #expect(bad.error.contains("--shard takes K/N with 1 ≤ K ≤ N"))
  }

  /// `--window` cuts the ten-minute ActiGraph scenario short, and says which
  /// counts it did not check; a nonsense window is a usage error.
  @Test func e2eWindowCutsALongScenarioAndSaysWhatItLeftOut() throws {
    let scenario = "Scenarios/actigraph-link/raw-streaming-10min.yaml"
    let junit = FileManager.default.temporaryDirectory.appendingPathComponent("doppel-window-\(getpid()).xml").path
    defer { try? FileManager.default.removeItem(atPath: junit) }
    let cut = try run(["e2e", "--loopback", "--window", "90s", "--junit", junit, scenario])
    #expect(cut.status == 0, "\(cut.output)\(cut.error)")
    #expect(cut.output.contains("window: the run was cut at 90s"))
    #expect(cut.output.contains("e2e: PASS (cut at 90s by --window: 1 count(s) not checked)"))
    #expect(cut.output.contains("(at least 17800 samples: not checked in the window)"))
    #expect(cut.output.contains("2610 'acc.z' samples at 30.00/s"))
    let xml = try String(contentsOfFile: junit, encoding: .utf8)
    #expect(xml.contains("failures=\"0\""))
    let bad = try run(["e2e", "--loopback", "--window", "soon", scenario])
    #expect(bad.status == 64)
    #expect(bad.error.contains("--window 'soon' is not a duration"))
  }

  /// `doppel lab` needs its lab script; without one it says how to get it.
  @Test func labWithoutItsScriptSaysHowToInstallIt() throws {
    let outcome = try run(["lab", "--", "true"], environment: ["DOPPEL_LAB_SCRIPT": "/nonexistent/lab"])
    #expect(outcome.status == 125)
    #expect(outcome.error.contains("run ci/install"))
    let noCommand = try run(["lab"])
    #expect(noCommand.status == 64)
  }

  /// A file a scenario names that cannot be read is reported at the scenario
  /// line that names it, every one of them.
  @Test func missingReferencedFilesAreReportedWhereTheScenarioNamesThem() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("doppel-missing-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("missing.yaml").path
    try """
    scenario: missing files
    duration: 5s
    devices:
      - id: board
        model: blend-micro
        streams:
          ecg: {csv: {file: no-such-recording.csv, time-column: t, column: v}}
      - id: pico
        model: emstat-pico
        client:
          script-file: no-such-script.mscr
    """.write(toFile: file, atomically: true, encoding: .utf8)
    let outcome = try run(["check", file])
    #expect(outcome.status == 2)
    #expect(outcome.error.contains("\(file):7:12: error: stream 'ecg' of 'board'"), "\(outcome.error)")
    #expect(outcome.error.contains("no-such-recording.csv"))
    #expect(outcome.error.contains("\(file):11:20: error: cannot read the MethodSCRIPT file"), "\(outcome.error)")
  }

  /// `--log-level` on every verb, `DOPPEL_LOG_LEVEL`, and the debug log file the lab asks for.
  @Test func loggingIsSetOnEveryVerb() throws {
    for verb in ["devices", "advertise", "watch", "check", "run", "e2e", "test", "lab"] {
      let help = try run([verb, "--help"])
      #expect(help.output.contains("--log-level"), "\(verb) has no --log-level")
    }
    let wrong = try run(["check", "--log-level", "nonsense", "Scenarios/e4/quick-start.yaml"])
    #expect(wrong.status == 64)
    #expect(wrong.error.contains("--log-level takes one of trace, debug, info"))
    let wrongEnvironment = try run(
      ["check", "Scenarios/e4/quick-start.yaml"], environment: ["DOPPEL_LOG_LEVEL": "loud"])
    #expect(wrongEnvironment.status == 64)
    #expect(wrongEnvironment.error.contains("DOPPEL_LOG_LEVEL takes one of"))
    let scenario = "Scenarios/faults/e4-link-lost-mid-stream.yaml"
    let quiet = try run(["e2e", "--loopback", scenario])
    #expect(quiet.status == 0)
    #expect(!quiet.error.contains("doppel.scenario"))
    let debug = try run(["e2e", "--loopback", "--log-level", "debug", scenario])
    #expect(debug.error.contains("doppel.scenario"))
    #expect(debug.error.contains("run starts"))
    #expect(debug.error.contains("loopback link down"))
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("doppel-logs-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let kept = try run(
      ["e2e", "--loopback", scenario], environment: ["DOPPEL_LOG_LEVEL": "info", "DOPPEL_LOG_DIR": folder.path])
    #expect(kept.error.contains("timeline event"))
    #expect(!kept.error.contains("loopback link down"))
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
    let log = try #require(files.first { $0.hasPrefix("doppel-e2e-") })
    let text = try String(contentsOf: folder.appendingPathComponent(log), encoding: .utf8)
    #expect(text.contains("debug doppel.gatt: loopback link down"))
  }
}
