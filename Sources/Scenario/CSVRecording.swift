import Foundation
import Signals

/// A recorded signal in a CSV file: a header row naming the columns, then one
/// row per sample with a time column (seconds) and value columns.
enum CSVRecording {
  /// Reads column `valueColumn` against `timeColumn` from the file at `path`.
  static func read(
    path: String, timeColumn: String, valueColumn: String, interpolation: RecordedSignal.Interpolation, loops: Bool
  ) throws(ScenarioError) -> RecordedSignal {
    guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
      throw ScenarioError(
        .badRecording, file: path, line: 0, column: 0, "the recording cannot be read (missing, or not UTF-8 text)")
    }
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
      $0.hasSuffix("\r") ? $0.dropLast() : $0
    }
    while let last = lines.last, last.isEmpty { lines.removeLast() }
    guard let header = lines.first else {
      throw ScenarioError(
        .badRecording, file: path, line: 1, column: 1, "the recording is empty", expected: "a header row")
    }
    let names = header.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
    func index(of column: String) throws(ScenarioError) -> Int {
      guard let index = names.firstIndex(of: column) else {
        throw ScenarioError(
          .badRecording, file: path, line: 1, column: 1, "the recording has no column '\(column)'",
          expected: "one of " + names.joined(separator: ", "),
          suggestion: ScenarioDocument.closest(to: column, in: names).map { "did you mean '\($0)'?" })
      }
      return index
    }
    let timeIndex = try index(of: timeColumn)
    let valueIndex = try index(of: valueColumn)
    var times: [Double] = []
    var values: [Double] = []
    for (offset, line) in lines.enumerated().dropFirst() where !line.isEmpty {
      let fields = line.split(separator: ",", omittingEmptySubsequences: false)
      func field(_ index: Int, _ name: String) throws(ScenarioError) -> Double {
        guard index < fields.count else {
          throw ScenarioError(
            .badRecording, file: path, line: offset + 1, column: line.count + 1, "row has no '\(name)' value",
            expected: "\(names.count) fields", found: "\(fields.count)")
        }
        let column = fields[..<index].reduce(1) { $0 + $1.count + 1 }
        let text = String(fields[index]).trimmingSpaces
        guard let value = Double(text), value.isFinite else {
          throw ScenarioError(
            .badRecording, file: path, line: offset + 1, column: column, "'\(name)' is not a number",
            expected: "a number", found: "'\(text)'")
        }
        return value
      }
      let time = try field(timeIndex, timeColumn)
      if let previous = times.last, time < previous {
        throw ScenarioError(
          .badRecording, file: path, line: offset + 1, column: 1, "time goes backwards",
          expected: "at least \(previous)", found: "\(time)")
      }
      times.append(time)
      values.append(try field(valueIndex, valueColumn))
    }
    guard let first = times.first else {
      throw ScenarioError(.badRecording, file: path, line: 2, column: 1, "the recording has no samples")
    }
    return RecordedSignal(times: times.map { $0 - first }, values: values, interpolation: interpolation, loops: loops)
  }
}
