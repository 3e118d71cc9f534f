import Foundation
import Testing

/// `doppel record`'s usage errors and an output folder it cannot write:
/// each refused before any radio is touched (these tests have none).
extension DoppelCLITests {
  @Test(arguments: ["0", "-5", "0s", "soon", "nan"])
  func recordRefusesADurationThatIsNotMoreThanZero(_ duration: String) throws {
    let outcome = try run(["record", "--name", "Sensor", "--duration=\(duration)", "-o", temporaryFolder()])
    #expect(outcome.status == 64, "\(outcome.error)")
    #expect(outcome.error.contains("--duration must be more than 0"), "\(outcome.error)")
  }

  @Test func recordWantsExactlyOneOfNameAndAddress() throws {
    let neither = try run(["record", "--duration", "10", "-o", temporaryFolder()])
    #expect(neither.status == 64)
    #expect(
      neither.error.contains("say which device to record: --name PREFIX or --address ADDRESS"), "\(neither.error)")
    let both = try run([
      "record", "--name", "Sensor", "--address", "00:AA:01:00:00:23", "--duration", "10", "-o", temporaryFolder(),
    ])
    #expect(both.status == 64)
    #expect(both.error.contains("--name and --address both choose the device: give one of them"), "\(both.error)")
    let bad = try run(["record", "--address", "00:AA:01", "--duration", "10", "-o", temporaryFolder()])
    #expect(bad.status == 64)
    #expect(bad.error.contains("--address takes an address like 00:AA:01:00:00:23, not '00:AA:01'"), "\(bad.error)")
  }

  @Test func recordRefusesAnOutputFolderItCannotWriteBeforeScanning() throws {
    // A folder inside a regular file cannot be made, whoever runs the test (root included).
    let file = NSTemporaryDirectory() + "doppel-record-\(UUID().uuidString)"
    try Data("not a folder".utf8).write(to: URL(fileURLWithPath: file))
    let outcome = try run(["record", "--name", "Sensor", "--duration", "10", "-o", file + "/out"])
    #expect(outcome.status == 1)
    #expect(outcome.error.contains("cannot write into \(file)/out"), "\(outcome.error)")
    #expect(!outcome.output.contains("scanning"), "it scanned before finding it cannot write")
    let itself = try run(["record", "--name", "Sensor", "--duration", "10", "-o", file])
    #expect(itself.status == 1)
    #expect(itself.error.contains("cannot write into \(file)"), "\(itself.error)")
  }
}
