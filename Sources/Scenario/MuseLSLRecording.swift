import Foundation
import Signals

/// An EEG recording muse-lsl wrote: a header naming `timestamps` and the
/// channels (`TP9`, `AF7`, `AF8`, `TP10`, `Right AUX`), then one row per
/// sample. `muselsl record` puts the timestamps first; `muselsl
/// record_direct` writes pandas' row number first and the timestamps last.
/// Either is read by column name, through `CSVTable`.
///
/// The samples are replayed at the headband's 256 Hz, one row each: muse-lsl
/// computes its timestamps from packet arrival (and writes them to the
/// millisecond), so they carry jitter the headband never had.
enum MuseLSLRecording {
  static let sampleRate = 256.0

  static func read(path: String, channel: String, loops: Bool) throws(ScenarioError) -> RecordedSignal {
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
          .badRecording, file: path, line: header.line, column: 1, "not a muse-lsl recording: no column '\(column)'",
          expected: "timestamps, TP9, AF7, AF8, TP10, Right AUX", found: names.joined(separator: ", "))
      }
      return index
    }
    let timeIndex = try index(of: "timestamps")
    let valueIndex = try index(of: channel)
    var values: [Double] = []
    var previous: Double?
    for row in table.rows.dropFirst() {
      func number(_ index: Int, _ name: String) throws(ScenarioError) -> Double {
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
      let time = try number(timeIndex, "timestamps")
      if let previous, time < previous {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: row.fields[timeIndex].column, "time goes backwards",
          expected: "at least \(previous)", found: "\(time)")
      }
      previous = time
      values.append(try number(valueIndex, channel))
    }
    guard !values.isEmpty else {
      throw ScenarioError(.badRecording, file: path, line: header.line + 1, column: 1, "the recording has no samples")
    }
    return RecordedSignal(values: values, sampleRate: sampleRate, loops: loops)
  }
}
