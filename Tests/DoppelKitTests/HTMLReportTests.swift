import DoppelKit
import Foundation
import Testing

/// The `--report` page: self-contained, one plot per stream, the faults and
/// the central's actions on the run's time axis, every verdict — and a real
/// browser reads it.
@Suite(.timeLimit(.minutes(1)))
struct HTMLReportTests {
  static let yaml = """
    scenario: report
    seed: 7
    duration: 20s
    devices:
      - id: wrist
        model: e4
    timeline:
      - {at: 8s, do: disconnect}
    expect:
      - samples: {stream: bvp, min-count: 100}
      - central-reconnected: {within: 5s, subscribed-again: bvp}
      - event: {name: tag, count: 3}
    """

  func page() async throws -> (String, ScenarioReport) {
    let scenario = try DeviceCatalog.parser.parse(yaml: Self.yaml, file: "report.yaml")
    let report = try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd)
    return (HTMLReport.page([report], title: "doppel e2e"), report)
  }

  static func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

  @Test func theStructureShowsStreamsFaultsActionsAndVerdicts() async throws {
    let (html, report) = try await page()
    #expect(html.hasPrefix("<!DOCTYPE html>"))
    // Nothing fetched from anywhere: no scripts, links or remote resources.
    for forbidden in ["<script", "<link", "http://", "https://", "src="] {
      #expect(!html.contains(forbidden), "the page has \(forbidden)")
    }
    let streams = report.observations["wrist"]?.streams.count ?? 0
    #expect(streams == 6)
    #expect(Self.count("<svg class=\"plot\"", in: html) == streams)
    #expect(Self.count("<svg class=\"activity\"", in: html) == 1)
    // The disconnect fault on every plot and on the activity track.
    #expect(Self.count("<title>disconnect at 8.000 s</title>", in: html) == streams + 1)
    // Two connections, shaded.
    #expect(Self.count("<rect class=\"link\"", in: html) == 2)
    // Verdicts: two held, the third (no tags pressed) failed, and the page says FAIL.
    #expect(Self.count("<tr class=\"pass\">", in: html) == 2)
    #expect(Self.count("<tr class=\"fail\">", in: html) == 1)
    #expect(html.contains("doppel e2e — FAIL"))
    // Each plot's trace is the thinned series of its stream.
    let bvp = try #require(report.observations["wrist"]?.streams["bvp"])
    #expect(!bvp.series.isEmpty && bvp.series.count <= StreamStatistics.seriesCapacity)
  }

  /// A client that draws its app's screen (the Kardia relay) gets it on the page, inline.
  @Test func theClientsDrawingsAreOnThePage() async throws {
    let yaml = """
      scenario: kardia-screen
      seed: 7
      duration: 20s
      devices:
        - id: board
          model: blend-micro
          client:
            kardia-relay: true
      timeline:
        - {after: subscribed, delay: 12s, do: end}
      expect:
        - no-errors: true
      """
    let scenario = try DeviceCatalog.parser.parse(yaml: yaml, file: "kardia-screen.yaml")
    let report = try await ScenarioRunner(scenario: scenario, bindings: DeviceCatalog.bindings)
      .run(on: LoopbackTransport(), mode: .endToEnd)
    let html = HTMLReport.page([report], title: "doppel e2e")
    #expect(Self.count("<svg class=\"kardia-screen\"", in: html) == 1)
    #expect(html.contains("Kardia app, as the client's app would show it"))
    for forbidden in ["<script", "<link", "http://", "https://", "src="] {
      #expect(!html.contains(forbidden), "the page has \(forbidden)")
    }
  }

  /// Chromium (Debian's, installed by ci/bootstrap) loads the page and finds what was drawn.
  @Test func aHeadlessBrowserRendersIt() async throws {
    let browser = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    let path = try #require(browser, "no chromium: run ci/bootstrap")
    let (html, _) = try await page()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("doppel-report-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("report.html")
    try html.write(to: file, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = [
      "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(folder.path)/profile", "--dump-dom",
      file.absoluteString,
    ]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let dom = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    // The browser's own serialisation of what it parsed: the plots and the table are there.
    #expect(Self.count("<svg class=\"plot\"", in: dom) == 6, "\(dom.prefix(300))")
    #expect(dom.contains("<polyline class=\"trace\""))
    #expect(dom.contains("<table class=\"expectations\">"))
  }
}
