import Foundation

/// A scenario report as JUnit XML, the format CI servers show test results
/// in: one test suite per scenario, one test case per expectation.
public enum JUnitReport {
  public static func xml(_ reports: [ScenarioReport]) -> String {
    var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>"]
    let failures = reports.reduce(0) { $0 + $1.results.filter { !$0.passed }.count }
    let tests = reports.reduce(0) { $0 + $1.results.count }
    lines.append("<testsuites name=\"doppel e2e\" tests=\"\(tests)\" failures=\"\(failures)\">")
    for report in reports {
      let failed = report.results.filter { !$0.passed }.count
      lines.append(
        "  <testsuite name=\"\(escape(report.scenario))\" tests=\"\(report.results.count)\" failures=\"\(failed)\" "
          + "time=\(String(format: "\"%.3f\"", report.wallTime.seconds)) file=\"\(escape(report.file))\">")
      for result in report.results {
        let name = "\(result.expectation.device): \(result.expected)"
        lines.append(
          "    <testcase classname=\"\(escape(report.scenario))\" name=\"\(escape(name))\" "
            + "file=\"\(escape(result.expectation.location.file))\" line=\"\(result.expectation.location.line)\">")
        if !result.passed {
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
