import Foundation
import Testing

/// `doppel import` on a real capture: two sessions the lab recorded (an E4
/// and a Blend Micro-shaped device, each cut from a longer hci.btsnoop to
/// its own connection), imported and replayed.
extension DoppelCLITests {
  static let captures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("CaptureTests/Captures")
  static let twoSessions = captures.appendingPathComponent("lab-two-sessions.btsnoop").path

  func temporaryFolder() -> String {
    NSTemporaryDirectory() + "doppel-import-\(UUID().uuidString)"
  }

  @Test func importWithoutADeviceListsThePeripheralsAsAUsageError() throws {
    let outcome = try run(["import", Self.twoSessions, "-o", temporaryFolder()])
    #expect(outcome.status == 64)
    #expect(outcome.error.contains("the capture has 2 peripherals with ATT traffic; choose one with --device"))
    #expect(outcome.error.contains("00:AA:01:02:00:02 \"Empatica E4\": 1 connection, 65 ATT PDUs"))
    #expect(outcome.error.contains("00:AA:01:00:00:00 \"BlendMicro\": 1 connection, 99 ATT PDUs"))
    let unknown = try run([
      "import", Self.twoSessions, "--device", "00:AA:01:00:00:99", "-o", temporaryFolder(),
    ])
    #expect(unknown.status == 64)
    #expect(unknown.error.contains("the capture has no peripheral 00:AA:01:00:00:99"))
  }

  @Test func anImportedSessionReplaysByteForByteInTheLoopback() throws {
    let folder = temporaryFolder()
    let imported = try run(["import", Self.twoSessions, "--device", "00:AA:01:02:00:02", "-o", folder])
    #expect(imported.status == 0, "\(imported.error)")
    #expect(imported.output.contains("22 notifications and indications → notifications.csv"))
    #expect(imported.output.contains("reason 0x13 (remote user terminated) → a timeline fault"))
    let scenario = try String(contentsOfFile: folder + "/scenario.yaml", encoding: .utf8)
    #expect(scenario.contains("- {after: subscribed, delay: 2929500us, do: disconnect}"))
    let recording = try String(contentsOfFile: folder + "/notifications.csv", encoding: .utf8)
      .split(separator: "\n").dropFirst()
    let run = try run(["e2e", "--loopback", folder + "/scenario.yaml"])
    #expect(run.status == 0, "\(run.output)\(run.error)")
    // Every recorded payload arrived: the first ones as printed, in order, and all of them by count
    // (GenericPeripheralLoopbackTests check replays value by value).
    let received = run.output.split(separator: "\n").compactMap { line -> String? in
      guard let range = line.range(of: "device: notification (") else { return nil }
      return String(line[range.upperBound...].dropLast()).replacingOccurrences(of: " ", with: ",")
    }
    let expected = recording.map { $0.split(separator: ",").dropFirst().joined(separator: ",") }
    #expect(!received.isEmpty)
    #expect(received == Array(expected.prefix(received.count)))
    #expect(run.output.contains("notification \(expected.count)×"))
    #expect(run.output.contains("2.929 s  device: disconnect"))
  }

  @Test func aBadCaptureIsRefusedNamingTheRecordAndItsOffset() throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: Self.twoSessions))
    let cut = NSTemporaryDirectory() + "doppel-cut-\(UUID().uuidString).btsnoop"
    try data.dropLast(5).write(to: URL(fileURLWithPath: cut))
    let outcome = try run(["import", cut, "--device", "00:AA:01:02:00:02", "-o", temporaryFolder()])
    #expect(outcome.status == 1)
    #expect(outcome.error.contains("\(cut): error: record 179 (byte offset "))
    #expect(outcome.error.contains("the file ends inside this record"))
    var header = Array(data.prefix(16))
    header[14] = 0x03  // datalink 1001 (0x03e9)
    header[15] = 0xE9
    try Data(header).write(to: URL(fileURLWithPath: cut))
    let datalink = try run(["import", cut, "-o", temporaryFolder()])
    #expect(datalink.status == 1)
    #expect(datalink.error.contains("datalink 1001 (HCI without framing) is not one this reader decodes"))
  }
}
