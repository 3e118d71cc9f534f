import Foundation
import Testing

/// Runs the built `doppel` binary, as a user would.
@Suite struct DoppelCLITests {
  struct Outcome {
    var status: Int32
    var output: String
    var error: String
  }

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
    let process = Process()
    process.executableURL = Self.binary
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let error = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Outcome(
      status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
      error: String(decoding: error, as: UTF8.self))
  }

  @Test func versionAndHelp() throws {
    let version = try run(["--version"])
    #expect(version.status == 0)
    #expect(version.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
    let help = try run(["--help"])
    #expect(help.status == 0)
    for verb in ["devices", "advertise", "watch", "e2e"] { #expect(help.output.contains(verb), "help lacks \(verb)") }
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
    let outcome = try run(["e2e", "--heart-rate", "400"])
    #expect(outcome.status == 64)
    #expect(outcome.error.contains("--heart-rate must be 20…250 bpm, got 400"))
    let same = try run(["e2e", "--peripheral-adapter", "hci0", "--central-adapter", "hci0"])
    #expect(same.status == 64)
    #expect(same.error.contains("different adapters"))
  }

  @Test func noBlueZIsAClearErrorNotAHang() throws {
    let outcome = try run(
      ["advertise", "blend-micro"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/doppel-test-bus"])
    #expect(outcome.status == 1)
    #expect(outcome.error.contains("cannot connect to system bus"))
    #expect(outcome.error.contains("/nonexistent/doppel-test-bus"))
  }
}
