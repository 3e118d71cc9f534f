#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The Kardia app's screens, drawn as SVG from what the relay knows: the main
/// view (the heart rate as sent, the status view's text, the live ECG trace
/// of the graph buffer) and the table of abnormal events.
///
/// The trace is drawn the way the app's modified Swift-Linechart drew it: a
/// white line on the dark view, its y scale fitted to the points shown rather
/// than starting at 0. Sizes, fonts and colours besides the line are this
/// project's. A report shows the drawing (`doppel run --report`), since a
/// headless run has no screen.
public struct KardiaScreen: Hashable, Sendable {
  /// The BPM view's text: the last heart rate as sent, `"- -"` without one.
  public var heartRateText: String
  /// The status view's text (`N/A`, `NSR`, `ARR`), or the code when the dictionary has none.
  public var statusText: String
  /// The graph buffer: the last 15 values as the board sent them.
  public var graph: KardiaGraph
  /// The abnormal events' table, oldest first.
  public var episodes: [ArrhythmiaLog.Entry]

  public init(heartRateText: String, statusText: String, graph: KardiaGraph, episodes: [ArrhythmiaLog.Entry]) {
    self.heartRateText = heartRateText
    self.statusText = statusText
    self.graph = graph
    self.episodes = episodes
  }

  static let width = 320.0
  static let chart = (top: 110.0, height: 160.0, inset: 10.0)
  static let rowHeight = 22.0

  /// The points of the trace, in the drawing's coordinates, oldest first:
  /// evenly spaced across the chart, the lowest value at its bottom and the
  /// highest at its top (one value, or all equal, across the middle).
  public var tracePoints: [(x: Double, y: Double)] {
    let values = graph.values
    guard !values.isEmpty else { return [] }
    let (low, high) = (values.min()!, values.max()!)
    let left = Self.chart.inset
    let span = Self.width - 2 * Self.chart.inset
    let step = values.count > 1 ? span / Double(KardiaGraph.capacity - 1) : 0
    let bottom = Self.chart.top + Self.chart.height - Self.chart.inset
    let height = Self.chart.height - 2 * Self.chart.inset
    return values.enumerated().map { i, value in
      let fraction = high > low ? (value - low) / (high - low) : 0.5
      return (left + Double(i) * step, bottom - fraction * height)
    }
  }

  /// The drawing: an `<svg>` element, its text escaped.
  public var svg: String {
    let tableTop = Self.chart.top + Self.chart.height + 40
    let height = tableTop + Self.rowHeight * Double(max(episodes.count, 1)) + 16
    var svg = """
      <svg class="kardia-screen" width="\(Int(Self.width))" \
      height="\(Int(height))" role="img" aria-label="Kardia app">
      <rect width="100%" height="100%" fill="#101418"/>
      <text x="16" y="56" fill="#ffffff" font-size="44" font-family="sans-serif">\(Self.escape(heartRateText))</text>
      <text x="16" y="80" fill="#9aa4ad" font-size="14" font-family="sans-serif">BPM</text>
      <text x="\(Int(Self.width - 16))" y="56" fill="#ffffff" font-size="32" font-family="sans-serif" \
      text-anchor="end">\(Self.escape(statusText))</text>

      """
    let points = tracePoints.map { "\(Self.number($0.x)),\(Self.number($0.y))" }
    svg += "<polyline class=\"trace\" fill=\"none\" stroke=\"#ffffff\" stroke-width=\"2\" "
    svg += "points=\"\(points.joined(separator: " "))\"/>\n"
    svg += "<text x=\"16\" y=\"\(Int(tableTop - 12))\" fill=\"#9aa4ad\" font-size=\"14\" "
    svg += "font-family=\"sans-serif\">Abnormal events</text>\n"
    if episodes.isEmpty {
      svg += "<text x=\"16\" y=\"\(Int(tableTop + 14))\" fill=\"#9aa4ad\" font-size=\"13\" "
      svg += "font-family=\"sans-serif\">none</text>\n"
    }
    for (i, episode) in episodes.enumerated() {
      let y = Int(tableTop + 14 + Self.rowHeight * Double(i))
      let rate = episode.heartRate.map { "\(Int($0.rounded())) bpm" } ?? episode.heartRateText
      svg += "<text class=\"episode\" x=\"16\" y=\"\(y)\" fill=\"#ffffff\" font-size=\"13\" font-family=\"sans-serif\">"
      svg += "\(Self.escape(KardiaWire.format(episode.time)))  \(Self.escape(rate))</text>\n"
    }
    return svg + "</svg>\n"
  }

  private static func number(_ value: Double) -> String {
    let tenths = (value * 10).rounded() / 10
    return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
  }

  private static func escape(_ text: String) -> String {
    var escaped = ""
    for character in text {
      switch character {
      case "&": escaped += "&amp;"
      case "<": escaped += "&lt;"
      case ">": escaped += "&gt;"
      case "\"": escaped += "&quot;"
      default: escaped.append(character)
      }
    }
    return escaped
  }
}

extension KardiaRelay {
  /// The app's screens as they stand: BPM, status, trace and the events' table.
  public var screen: KardiaScreen {
    KardiaScreen(
      heartRateText: heartRateText, statusText: statusDescription ?? statusCode, graph: graph,
      episodes: arrhythmiaLog.entries)
  }
}
