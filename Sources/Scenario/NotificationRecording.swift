import Foundation
import GATT
import Signals

/// A recording of notifications a device sent: a CSV file with the header
/// `time,characteristic,value` and one row per value — seconds from the
/// replay's anchor, the key (or UUID) of a characteristic of the profile that
/// notifies or indicates, and
/// the bytes in hex. `doppel import` writes these; a `generic` device's
/// `replay:` reads them.
public enum NotificationRecording {
  /// The header row.
  public static let header = "time,characteristic,value"

  /// The entries of the recording at `path`, each characteristic resolved by
  /// `resolve` (a key or UUID to its address, `nil` when the profile has none).
  /// Every problem is a `ScenarioError` at its line and column.
  static func read(
    path: String, keys: [String], resolve: (String) -> CharacteristicAddress?
  ) throws(ScenarioError) -> [ProfileDeclaration.Replay.Entry] {
    guard let data = FileManager.default.contents(atPath: path) else {
      let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
      throw ScenarioError(.badRecording, file: path, line: 0, column: 0, "the recording \(reason)")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw ScenarioError(.badRecording, file: path, line: 0, column: 0, "the recording is not UTF-8 text")
    }
    let table = CSVTable(text)
    guard let first = table.rows.first else {
      throw ScenarioError(
        .badRecording, file: path, line: 1, column: 1, "the recording is empty", expected: "the header '\(header)'")
    }
    guard first.fields.map(\.text) == ["time", "characteristic", "value"] else {
      throw ScenarioError(
        .badRecording, file: path, line: first.line, column: 1, "the recording's header is not '\(header)'",
        found: "'" + first.fields.map(\.text).joined(separator: ",") + "'")
    }
    var entries: [ProfileDeclaration.Replay.Entry] = []
    entries.reserveCapacity(table.rows.count - 1)
    var previous = 0.0
    for row in table.rows.dropFirst() {
      guard row.fields.count == 3 else {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: row.fields.count > 3 ? row.fields[3].column : row.end,
          "a row has \(row.fields.count) fields", expected: "3: time, characteristic, value")
      }
      let (timeField, keyField, valueField) = (row.fields[0], row.fields[1], row.fields[2])
      guard let seconds = Double(timeField.text), seconds.isFinite, seconds >= 0 else {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: timeField.column, "'time' is not a time in seconds",
          expected: "a number ≥ 0", found: "'\(timeField.text)'")
      }
      guard seconds >= previous else {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: timeField.column, "time goes backwards",
          expected: "at least \(previous)", found: "\(seconds)")
      }
      previous = seconds
      guard let address = resolve(keyField.text) else {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: keyField.column,
          "the profile has no characteristic '\(keyField.text)' that notifies or indicates",
          expected: "one of " + keys.joined(separator: ", "),
          suggestion: ScenarioDocument.closest(to: keyField.text, in: keys).map { "did you mean '\($0)'?" })
      }
      guard let value = HexBytes.parse(valueField.text) else {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: valueField.column, "'value' is not hex bytes",
          expected: "hex like 0a1b2c", found: "'\(valueField.text)'")
      }
      entries.append(.init(time: .seconds(seconds), characteristic: address, value: value))
    }
    return entries
  }
}
