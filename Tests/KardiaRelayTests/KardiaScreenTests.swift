import Foundation
import KardiaRelay
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// The app's screens as the report draws them: BPM, status, the trace of
/// the graph buffer (white, its scale fitted to the points) and the table of
/// abnormal events.
struct KardiaScreenTests {
  static func screen(points: [String], heartRate: String = "72", status: String = "NSR", episodes: Int = 0)
    -> KardiaScreen
  {
    var graph = KardiaGraph()
    for point in points { graph.append(point) }
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    return KardiaScreen(
      heartRateText: heartRate, statusText: status, graph: graph,
      episodes: (0..<episodes).map {
        ArrhythmiaLog.Entry(time: start + Double($0) * 60, heartRateText: "\(110 + $0)")
      })
  }

  /// Whether the drawing is well-formed XML (a browser drops a malformed SVG).
  static func parses(_ svg: String) -> Bool {
    XMLParser(data: Data(svg.utf8)).parse()
  }

  @Test func theTraceSpansTheChartWithItsScaleFittedToThePoints() throws {
    let values = (0..<20).map { 1.0 + 0.1 * sin(Double($0)) }
    let screen = Self.screen(points: values.map { String($0) })
    let points = screen.tracePoints
    #expect(points.count == KardiaGraph.capacity)
    let xs = points.map(\.x)
    #expect(zip(xs, xs.dropFirst()).allSatisfy { abs(($1 - $0) - (xs[1] - xs[0])) < 1e-9 })
    // The lowest of the last 15 values at the bottom, the highest at the top: the scale is the points',
    // not 0…max (the values here are all near 1).
    let shown = Array(values.suffix(15))
    let ys = points.map(\.y)
    let (top, bottom) = (ys.min()!, ys.max()!)
    #expect(ys[shown.firstIndex(of: shown.max()!)!] == top)
    #expect(ys[shown.firstIndex(of: shown.min()!)!] == bottom)
    #expect(bottom - top > 100)
  }

  @Test func aFlatTraceRunsAcrossTheMiddle() {
    let points = Self.screen(points: Array(repeating: "0.5", count: 3)).tracePoints
    #expect(points.count == 3)
    #expect(Set(points.map(\.y)).count == 1)
  }

  @Test func theDrawingShowsRateStatusTraceAndEvents() throws {
    let svg = Self.screen(points: ["1", "2", "3"], heartRate: "112", status: "ARR", episodes: 2).svg
    #expect(Self.parses(svg))
    #expect(svg.contains(">112<"))
    #expect(svg.contains(">ARR<"))
    #expect(svg.contains("stroke=\"#ffffff\""))
    #expect(svg.components(separatedBy: "class=\"episode\"").count - 1 == 2)
    #expect(svg.contains("110 bpm") && svg.contains("111 bpm"))
    #expect(svg.contains("2023-11-14T22:13:20.000Z"))
  }

  @Test func withoutDataItShowsWhatTheAppShowed() {
    let svg = Self.screen(points: [], heartRate: "- -", status: "N/A").svg
    #expect(Self.parses(svg))
    #expect(svg.contains(">- -<") && svg.contains(">N/A<"))
    #expect(svg.contains("points=\"\""))
    #expect(svg.contains(">none<"))
  }

  @Test func textFromTheServerIsEscaped() {
    let svg = Self.screen(points: ["1"], heartRate: "<b>&", status: "\"x\"").svg
    #expect(Self.parses(svg))
    #expect(svg.contains("&lt;b&gt;&amp;") && svg.contains("&quot;x&quot;"))
  }
}
