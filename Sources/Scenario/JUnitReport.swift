import Foundation

/// A scenario report as JUnit XML, the format CI servers show test results
/// in: one test suite per scenario, one test case per expectation.
public enum JUnitReport {
  /// A test case beside the expectations: the outside central's own outcome (`doppel test`).
  public struct Case: Sendable {
    public var name: String
    public var passed: Bool
    /// Why it failed, or what it did.
    public var message: String

    public init(name: String, passed: Bool, message: String) {
      self.name = name
      self.passed = passed
      self.message = message
    }
  }

  /// - Parameters:
  ///   - name: the suites' name (the command that ran them).
  ///   - extra: more test cases for each scenario's suite, by the report's index.
  public static func xml(_ reports: [ScenarioReport], name: String = "doppel e2e", extra: [[Case]] = []) -> String {
    var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>"]
    let failures =
      reports.reduce(0) { $0 + $1.results.filter { !$0.held }.count }
      + extra.joined().filter { !$0.passed }.count
    let tests = reports.reduce(0) { $0 + $1.results.count } + extra.joined().count
    let skipped = reports.reduce(0) { $0 + $1.notChecked }
    lines.append(
      "<testsuites name=\"\(escape(name))\" tests=\"\(tests)\" failures=\"\(failures)\" skipped=\"\(skipped)\">")
    for (index, report) in reports.enumerated() {
      let cases = index < extra.count ? extra[index] : []
      let failed = report.results.filter { !$0.held }.count + cases.filter { !$0.passed }.count
      lines.append(
        "  <testsuite name=\"\(escape(report.scenario))\" tests=\"\(report.results.count + cases.count)\" "
          + "failures=\"\(failed)\" skipped=\"\(report.notChecked)\" "
          + "time=\(String(format: "\"%.3f\"", report.wallTime.seconds)) file=\"\(escape(report.file))\">")
      let hostEvents = report.activity.sorted { $0.key < $1.key }.flatMap { device, activity in
        activity.hostEvents.map { String(format: "%.3f s %@: ", $0.at, device) + $0.event.description }
      }
      if !hostEvents.isEmpty {
        // The stack's outages, as events of the run rather than failures of their own.
        lines.append("    <properties>")
        for event in hostEvents { lines.append("      <property name=\"host-event\" value=\"\(escape(event))\"/>") }
        lines.append("    </properties>")
      }
      for extra in cases {
        lines.append("    <testcase classname=\"\(escape(report.scenario))\" name=\"\(escape(extra.name))\">")
        lines.append(
          extra.passed
            ? "      <system-out>\(escape(extra.message))</system-out>"
            : "      <failure message=\"\(escape(extra.message))\"></failure>")
        lines.append("    </testcase>")
      }
      for result in report.results {
        let name = "\(result.expectation.device): \(result.expected)"
        lines.append(
          "    <testcase classname=\"\(escape(report.scenario))\" name=\"\(escape(name))\" "
            + "file=\"\(escape(result.expectation.location.file))\" line=\"\(result.expectation.location.line)\">")
        if let why = result.notChecked {
          lines.append("      <skipped message=\"\(escape(why))\"></skipped>")
          lines.append("      <system-out>\(escape(result.observed))</system-out>")
        } else if !result.passed {
          lines.append(
            "      <failure message=\"\(escape("expected \(result.expected); observed \(result.observed)"))\">"
              + "\(escape(result.expectation.location.description))</failure>")
        } else {
          lines.append("      <system-out>\(escape(result.observed))</system-out>")
        }
        lines.append("    </testcase>")
      }
      lines.append("  </testsuite>")
    }
    lines.append("</testsuites>")
    return lines.joined(separator: "\n") + "\n"
  }

  static func escape(_ text: String) -> String {
    var out = ""
    for character in text {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&apos;"
      default: out.append(character)
      }
    }
    return out
  }
}
