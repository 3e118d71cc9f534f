import BlendMicroClient
import Foundation
import Signals
import Testing

@testable import KardiaRelay

/// The analysis server driven by a Socket.IO client written independently of
/// it: python-socketio from PyPI (installed by ci/bootstrap), in a python3
/// subprocess, over the WebSocket transport; version 5 (Engine.IO 4, the
/// server pings) and version 4 (Engine.IO 3 as the Kardia app's generation
/// spoke it, the client pings), from `/opt/doppel/python-socketio-4` or
/// `DOPPEL_PYTHON_SOCKETIO4`.
@Suite(.timeLimit(.minutes(1)))
struct PythonSocketIOTests {
  /// What the client does: connects,
  /// emits every sample of the file named by its second argument on
  /// `message` as the app did, then an event the server refuses, an unknown
  /// event and `/BLEDisconnect` (with an ack, which `call` waits for); waits
  /// for the `node.js` answers and prints what it saw as JSON.
  static let client = #"""
    import json, sys, threading, time
    from importlib import metadata
    try:
        import socketio
    except ImportError as error:
        print(f"python-socketio is not installed ({error}): run ci/bootstrap", file=sys.stderr)
        sys.exit(3)
    port, samples_path, expected = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    samples = json.load(open(samples_path))
    analyses, errors, all_in = [], [], threading.Event()
    client = socketio.Client(reconnection=False)

    @client.on("node.js")
    def analysis(data):
        analyses.append(data)
        if len(analyses) >= expected:
            all_in.set()

    @client.on("/error")
    def error(data):
        errors.append(data)

    try:
        client.connect(f"http://127.0.0.1:{port}", transports=["websocket"], wait_timeout=10)
    except TypeError:  # python-socketio 4 has no wait_timeout
        client.connect(f"http://127.0.0.1:{port}", transports=["websocket"])
    started = time.monotonic()
    for amplitude, sent in samples:
        client.emit("message", {"amplitude": amplitude, "time": sent})
    all_in.wait(20)
    client.emit("message", {"amplitude": "0.5"})
    client.emit("heartbeat", {})
    ack = client.call("/BLEDisconnect", timeout=10)
    # Answers to the refused events come before the ack: they were sent first.
    time.sleep(max(0, 3.2 - (time.monotonic() - started)))  # outlive a few heartbeats
    print(json.dumps({
        "version": metadata.version("python-socketio"),
        "engineio": metadata.version("python-engineio"),
        "transport": client.transport(),
        "sid": client.get_sid() if hasattr(client, "get_sid") else client.sid,
        "analyses": analyses,
        "errors": errors,
        "ack": ack,
        "connected": client.connected,
    }))
    client.disconnect()
    """#

  struct Report: Decodable {
    var version: String
    var engineio: String
    var transport: String
    var sid: String?
    var analyses: [[String: String]]
    var errors: [[String: String]]
    var connected: Bool
  }

  /// Where python-socketio 4 is (ci/bootstrap puts it there).
  static let socketIO4 =
    ProcessInfo.processInfo.environment["DOPPEL_PYTHON_SOCKETIO4"] ?? "/opt/doppel/python-socketio-4"

  @Test(arguments: [5, 4])
  func pythonSocketIOEmitsTheAppsEventsAndReadsTheAnswers(major: Int) async throws {
    // A heartbeat every second: the session lasts only if the client keeps it. (python-engineio 3
    // ends the session when a pong takes longer than one interval: at 300 ms, a loaded CI machine
    // ended it once, 2026-11-27.)
    let configuration = KardiaAnalysisServer.Configuration(
      analysisInterval: 10, pingInterval: .seconds(1), pingTimeout: .seconds(10))
    let report = try await TestServer.with(configuration) { server in
      // 10 s of ECG at 72 bpm, as the board's text with its line end, timed as the app timed them.
      let ecg = SyntheticECG(heartRate: 72)
      let samples = ecg.samples(0..<1000).enumerated().map { n, value in
        [SyntheticECG.text(value) + "\r\n", KardiaWire.format(ECGFeed.epoch + Double(n) / 100)]
      }
      let path = major == 4 ? Self.socketIO4 : nil
      if let path {
        try #require(
          FileManager.default.fileExists(atPath: "\(path)/socketio"),
          "no python-socketio 4 in \(path): run ci/bootstrap")
      }
      let output = try await Self.runClient(port: server.port, samples: samples, expected: 100, pythonPath: path)
      return try JSONDecoder().decode(Report.self, from: Data(output.utf8))
    }
    // python-socketio 5 speaks Engine.IO 4 (the server pings), 4 speaks 3 (the client pings): nothing closed.
    #expect(report.version.hasPrefix("\(major)."), "\(report.version)")
    #expect(report.engineio.hasPrefix(major == 5 ? "4." : "3."), "\(report.engineio)")
    #expect(report.transport == "websocket")
    #expect(report.sid?.isEmpty == false)
    #expect(report.connected)
    // Every 10th sample answered, with the app's keys, string values and codes.
    // python-socketio may run event handlers on threads of its own, so the list is in the
    // order the handlers ran: order it by the analysed sample's time (ISO 8601, one zone).
    let analyses = report.analyses.sorted { ($0["time"] ?? "") < ($1["time"] ?? "") }
    #expect(analyses.count == 100)
    #expect(analyses.allSatisfy { Set($0.keys) == ["heartRate", "statusCode", "time"] })
    #expect(analyses.allSatisfy { ["0", "200"].contains($0["statusCode"]) })
    #expect(analyses.prefix(30).allSatisfy { $0["statusCode"] == "0" && $0["heartRate"] == "- -" })
    let last = try #require(analyses.last)
    #expect(last["statusCode"] == "200")
    #expect(last["time"] == "2025-06-15T15:06:49.990Z")
    let rate = try #require(last["heartRate"].flatMap(Double.init))
    #expect(abs(rate - 72) <= 2)
    // The refused sample and the unknown event were answered on /error, saying why.
    #expect(report.errors.count == 2, "\(report.errors)")
    #expect(report.errors.first?["error"]?.contains("missing key \"time\"") == true)
    #expect(report.errors.first?["event"] == "message")
    #expect(report.errors.last?["error"]?.contains("unknown event \"heartbeat\"") == true)
  }

  /// Runs the client against `port` with `samples` ([amplitude, time] pairs)
  /// and returns what it printed; throws, saying why, if it failed or took
  /// more than 40 s.
  static func runClient(port: Int, samples: [[String]], expected: Int, pythonPath: String?) async throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kardia-socketio-\(getpid())-\(port)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let input = folder.appendingPathComponent("samples.json")
    try JSONEncoder().encode(samples).write(to: input)
    let stdout = folder.appendingPathComponent("stdout")
    let stderr = folder.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
    _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)

    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", client, String(port), input.path, String(expected)]
    if let pythonPath {
      var environment = ProcessInfo.processInfo.environment
      environment["PYTHONPATH"] = pythonPath
      process.environment = environment
    }
    process.standardOutput = try FileHandle(forWritingTo: stdout)
    process.standardError = try FileHandle(forWritingTo: stderr)
    let (ended, end) = AsyncStream<Void>.makeStream()
    process.terminationHandler = { _ in end.yield() }
    try process.run()
    let finished =
      (try? await TimedOut.within(.seconds(40), "the python-socketio client") {
        await ended.first { true } != nil
      }) ?? false
    if !finished {
      process.terminate()
      process.waitUntilExit()
    }
    let output = try String(contentsOf: stdout, encoding: .utf8)
    let errors = try String(contentsOf: stderr, encoding: .utf8)
    guard finished else {
      throw ClientFailure(description: "the python-socketio client took more than 40 s: \(errors.suffix(2000))")
    }
    guard process.terminationStatus == 0 else {
      throw ClientFailure(
        description: "the python-socketio client exited with \(process.terminationStatus): \(errors.suffix(2000))")
    }
    return output
  }

  struct ClientFailure: Error, CustomStringConvertible {
    var description: String
  }
}
