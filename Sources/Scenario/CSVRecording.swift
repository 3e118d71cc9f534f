import Foundation
import Signals

/// A recorded signal in a CSV file: a header row naming the columns, then one
/// row per sample with a time column (seconds) and value columns. Read with
/// the one CSV reader, `CSVTable`.
enum CSVRecording {
  /// Reads column `valueColumn` against `timeColumn` from the file at `path`.
  static func read(
    path: String, timeColumn: String, valueColumn: String, interpolation: RecordedSignal.Interpolation, loops: Bool
  ) throws(ScenarioError) -> RecordedSignal {
    let (times, values) = try columns(path: path, time: timeColumn, value: valueColumn)
    let first = times[0]
    return RecordedSignal(times: times.map { $0 - first }, values: values, interpolation: interpolation, loops: loops)
  }

  /// The time and value columns of the file at `path`, by name, with at
  /// least one sample, the times never going backwards. Every problem is a
  /// `ScenarioError` at its line and column; `expected` lists what a missing
  /// column should have been (by default, the file's own columns).
  static func columns(
    path: String, time timeColumn: String, value valueColumn: String, expected: String? = nil
  ) throws(ScenarioError) -> (times: [Double], values: [Double]) {
    guard let data = FileManager.default.contents(atPath: path) else {
      let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
      throw ScenarioError(.badRecording, file: path, line: 0, column: 0, "the recording \(reason)")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw ScenarioError(.badRecording, file: path, line: 0, column: 0, "the recording is not UTF-8 text")
    }
    let table = CSVTable(text)
    guard let header = table.rows.first else {
      throw ScenarioError(
        .badRecording, file: path, line: 1, column: 1, "the recording is empty", expected: "a header row")
    }
    let names = header.fields.map(\.text)
    func index(of column: String) throws(ScenarioError) -> Int {
      guard let index = names.firstIndex(of: column) else {
        throw ScenarioError(
          .badRecording, file: path, line: header.line, column: 1, "the recording has no column '\(column)'",
          expected: expected ?? "one of " + names.joined(separator: ", "),
          found: expected == nil ? nil : names.joined(separator: ", "),
          suggestion: ScenarioDocument.closest(to: column, in: names).map { "did you mean '\($0)'?" })
      }
      return index
    }
    let timeIndex = try index(of: timeColumn)
    let valueIndex = try index(of: valueColumn)
    var times: [Double] = []
    var values: [Double] = []
    for row in table.rows.dropFirst() {
      func field(_ index: Int, _ name: String) throws(ScenarioError) -> Double {
        guard index < row.fields.count else {
          throw ScenarioError(
            .badRecording, file: path, line: row.line, column: row.end, "row has no '\(name)' value",
            expected: "\(names.count) fields", found: "\(row.fields.count)")
        }
        let field = row.fields[index]
        guard let value = Double(field.text), value.isFinite else {
          throw ScenarioError(
            .badRecording, file: path, line: row.line, column: field.column, "'\(name)' is not a number",
            expected: "a number", found: "'\(field.text)'")
        }
        return value
      }
      let time = try field(timeIndex, timeColumn)
      if let previous = times.last, time < previous {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: row.fields[timeIndex].column, "time goes backwards",
          expected: "at least \(previous)", found: "\(time)")
      }
      times.append(time)
      values.append(try field(valueIndex, valueColumn))
    }
    guard !times.isEmpty else {
      throw ScenarioError(.badRecording, file: path, line: header.line + 1, column: 1, "the recording has no samples")
    }
    return (times, values)
  }
}
