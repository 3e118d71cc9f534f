import Foundation

/// A scenario run as one self-contained web page (no scripts, no fonts, no
/// network): each device's streams plotted over the run's time, the
/// timeline's faults and the central's actions on the same time axis, and
/// each expectation's verdict. `doppel e2e --report` and `doppel test
/// --report` write it.
public enum HTMLReport {
  /// The page for `reports` (one section per scenario run).
  public static func page(_ reports: [ScenarioReport], title: String) -> String {
    let passed = reports.allSatisfy(\.passed)
    var html = """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <title>\(escape(title))</title>
      <style>
      body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
      h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 2em; } h3 { font-size: 1.05em; }
      .pass { color: #19692c; } .fail { color: #b00020; } .skip { color: #8a6d00; }
      table { border-collapse: collapse; width: 100%; margin: 0.5em 0; }
      td, th { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
      th { background: #f4f4f4; }
      svg { background: #fcfcfc; border: 1px solid #e4e4e4; display: block; margin: 0.3em 0 1em; }
      .axis { stroke: #999; stroke-width: 1; } .grid { stroke: #eee; stroke-width: 1; }
      .trace { fill: none; stroke: #1f5fbf; stroke-width: 1.2; }
      .fault { stroke: #d2691e; stroke-width: 1.5; stroke-dasharray: 4 3; }
      .link { fill: #cfe8cf; } .mark { stroke-width: 2; }
      text { font: 11px system-ui, sans-serif; fill: #444; }
      </style>
      </head>
      <body>
      <h1 class="\(passed ? "pass" : "fail")">\(escape(title)) — \(passed ? "PASS" : "FAIL")</h1>

      """
    for report in reports { html += section(report) }
    html += "</body>\n</html>\n"
    return html
  }

  private static func section(_ report: ScenarioReport) -> String {
    let span = max(report.elapsed.seconds, 0.001)
    var html = """
      <section class="scenario" id="\(escape(anchor(report.scenario)))">
      <h2 class="\(report.passed ? "pass" : "fail")">\(escape(report.scenario)) \
      (\(escape(report.file))) — \(report.passed ? "PASS" : "FAIL")</h2>
      <p>\(String(format: "%.3f", span)) s of scenario time in \(String(format: "%.2f", report.wallTime.seconds)) s \
      wall.\(report.window.map { " Cut at \(ScenarioDuration.format($0)) by --window: \(report.notChecked) count(s) not checked." } ?? "")</p>

      """
    html += "<h3>Expectations</h3>\n<table class=\"expectations\">\n"
    html += "<tr><th>verdict</th><th>device</th><th>expected</th><th>observed</th><th>where</th></tr>\n"
    for result in report.results {
      html +=
        "<tr class=\"\(result.verdict.lowercased())\"><td>\(result.verdict)</td>"
        + "<td>\(escape(result.expectation.device))</td><td>\(escape(result.expected))</td>"
        + "<td>\(escape(result.observed))</td><td>\(escape(result.expectation.location.description))</td></tr>\n"
    }
    html += "</table>\n"
    let hostEvents = report.activity.sorted { $0.key < $1.key }.flatMap { device, activity in
      activity.hostEvents.map { String(format: "%.3f s %@: ", $0.at, device) + $0.event.description }
    }
    if !hostEvents.isEmpty {
      html += "<h3>Host events</h3>\n<ul class=\"host-events\">\n"
      for event in hostEvents { html += "<li>\(escape(event))</li>\n" }
      html += "</ul>\n"
    }
    if !report.timeline.isEmpty {
      html += "<h3>Timeline</h3>\n<table class=\"timeline\">\n<tr><th>time</th><th>device</th><th>what</th></tr>\n"
      for event in report.timeline {
        html +=
          "<tr><td>\(String(format: "%.3f s", event.time))</td><td>\(escape(event.device ?? "scenario"))</td>"
          + "<td>\(escape(event.action))</td></tr>\n"
      }
      html += "</table>\n"
    }
    let devices = Set(report.observations.keys).union(report.activity.keys).sorted()
    for device in devices {
      html += "<h3>\(escape(device))</h3>\n"
      let faults = report.timeline.filter { $0.device == device || $0.device == nil }
      if let activity = report.activity[device] {
        html += "<p>What the device saw the central do (connections shaded, faults dashed):</p>\n"
        html += activityTrack(activity, faults: faults, span: span)
      }
      for (stream, statistics) in (report.observations[device]?.streams ?? [:]).sorted(by: { $0.key < $1.key }) {
        html += "<p class=\"stream\">\(escape(stream)): \(statistics.count) samples"
        if let rate = statistics.rate { html += String(format: " at %.2f/s", rate) }
        html += "</p>\n" + plot(statistics, faults: faults, span: span)
      }
      // The client's own drawings (an app's screen), made by our code with its text escaped.
      for (title, svg) in (report.observations[device]?.drawings ?? [:]).sorted(by: { $0.key < $1.key }) {
        html += "<p class=\"drawing\">\(escape(title)), as the client's app would show it:</p>\n\(svg)"
      }
    }
    html += "</section>\n"
    return html
  }

  // MARK: Drawing

  static let width = 1000.0
  static let left = 60.0
  static let right = 10.0

  private static func x(_ time: Double, _ span: Double) -> Double {
    left + (width - left - right) * min(max(time / span, 0), 1)
  }

  private static func number(_ value: Double) -> String { String(format: "%.1f", value) }

  /// A stream's samples over the run, with the faults marked.
  private static func plot(_ statistics: StreamStatistics, faults: [ScenarioReport.FiredEvent], span: Double)
    -> String
  {
    let height = 160.0
    let top = 10.0
    let bottom = 22.0
    var low = statistics.minimum
    var high = statistics.maximum
    if !(low.isFinite && high.isFinite) { (low, high) = (0, 1) }
    if high - low < 1e-12 { (low, high) = (low - 1, high + 1) }
    let y = { (value: Double) in top + (height - top - bottom) * (1 - (value - low) / (high - low)) }
    var svg = "<svg class=\"plot\" width=\"\(Int(width))\" height=\"\(Int(height))\" role=\"img\">\n"
    svg += axes(height: height, bottom: bottom, span: span)
    svg += "<text x=\"4\" y=\"\(number(y(high) + 4))\">\(format(high))</text>\n"
    svg += "<text x=\"4\" y=\"\(number(y(low)))\">\(format(low))</text>\n"
    if !statistics.series.isEmpty {
      let points = statistics.series.map { "\(number(x($0.time, span))),\(number(y($0.value)))" }
      svg += "<polyline class=\"trace\" points=\"\(points.joined(separator: " "))\"/>\n"
    }
    for fault in faults {
      svg += faultLine(fault, top: top, bottom: height - bottom, span: span)
    }
    return svg + "</svg>\n"
  }

  /// Connections as shaded spans, subscriptions, writes and firmware events as marks, faults as dashed lines.
  private static func activityTrack(_ activity: CentralActivity, faults: [ScenarioReport.FiredEvent], span: Double)
    -> String
  {
    let height = 90.0
    let bottom = 22.0
    var svg = "<svg class=\"activity\" width=\"\(Int(width))\" height=\"\(Int(height))\" role=\"img\">\n"
    svg += axes(height: height, bottom: bottom, span: span)
    svg += "<text x=\"4\" y=\"20\">link</text><text x=\"4\" y=\"40\">subscribe</text>"
    svg += "<text x=\"4\" y=\"60\">write/fw</text>\n"
    for connection in activity.connections {
      let start = x(connection.connectedAt, span)
      let end = x(connection.disconnectedAt ?? span, span)
      svg +=
        "<rect class=\"link\" x=\"\(number(start))\" y=\"8\" width=\"\(number(max(end - start, 1)))\" "
        + "height=\"16\"><title>\(escape(connection.central)) \(String(format: "%.3f", connection.connectedAt))"
        + "–\(connection.disconnectedAt.map { String(format: "%.3f s", $0) } ?? "end")"
        + "\(connection.endedBy.map { ", ended: \($0)" } ?? "")</title></rect>\n"
    }
    for subscription in activity.subscriptions {
      let at = number(x(subscription.at, span))
      svg +=
        "<line class=\"mark\" x1=\"\(at)\" x2=\"\(at)\" y1=\"30\" y2=\"46\" "
        + "stroke=\"\(subscription.subscribed ? "#19692c" : "#b00020")\"><title>"
        + "\(subscription.subscribed ? "subscribed to" : "unsubscribed from") \(escape(subscription.characteristic)) "
        + "at \(String(format: "%.3f s", subscription.at))</title></line>\n"
    }
    for access in activity.accesses where access.kind != .read {
      let at = number(x(access.at, span))
      svg +=
        "<line class=\"mark\" x1=\"\(at)\" x2=\"\(at)\" y1=\"50\" y2=\"60\" stroke=\"\(access.error == nil ? "#555" : "#b00020")\">"
        + "<title>wrote \(escape(access.characteristic)) at \(String(format: "%.3f s", access.at))</title></line>\n"
    }
    for event in activity.firmwareEvents {
      let at = number(x(event.at, span))
      svg +=
        "<circle cx=\"\(at)\" cy=\"64\" r=\"3\" fill=\"#6a1b9a\"><title>\(escape(event.name)): "
        + "\(escape(event.detail)) at \(String(format: "%.3f s", event.at))</title></circle>\n"
    }
    for fault in faults { svg += faultLine(fault, top: 4, bottom: height - bottom, span: span) }
    return svg + "</svg>\n"
  }

  private static func axes(height: Double, bottom: Double, span: Double) -> String {
    let base = height - bottom
    var svg =
      "<line class=\"axis\" x1=\"\(number(left))\" x2=\"\(number(width - right))\" y1=\"\(number(base))\" "
      + "y2=\"\(number(base))\"/>\n"
    for tick in 0...10 {
      let time = span * Double(tick) / 10
      let at = number(x(time, span))
      svg += "<line class=\"grid\" x1=\"\(at)\" x2=\"\(at)\" y1=\"0\" y2=\"\(number(base))\"/>"
      svg += "<text x=\"\(at)\" y=\"\(number(height - 6))\" text-anchor=\"middle\">\(format(time)) s</text>\n"
    }
    return svg
  }

  private static func faultLine(_ fault: ScenarioReport.FiredEvent, top: Double, bottom: Double, span: Double)
    -> String
  {
    let at = number(x(fault.time, span))
    return
      "<line class=\"fault\" x1=\"\(at)\" x2=\"\(at)\" y1=\"\(number(top))\" y2=\"\(number(bottom))\">"
      + "<title>\(escape(fault.action)) at \(String(format: "%.3f s", fault.time))</title></line>\n"
  }

  private static func format(_ value: Double) -> String { String(format: "%.4g", value) }

  private static func anchor(_ name: String) -> String {
    String(name.map { $0.isLetter || $0.isNumber ? $0 : "-" })
  }

  static func escape(_ text: String) -> String { JUnitReport.escape(text) }
}
