import Foundation
import GATT
import Signals

/// A recording of the writes a central made: a CSV file with the header
/// `time,characteristic,value,type,answer` — seconds from the replay's
/// anchor (negative: before it), the characteristic's key (or UUID), the
/// bytes in hex, `request` (with response) or `command` (without), and what
/// the device answered. `doppel import` writes these; a `generic` device's
/// client (`client: {writes: FILE}`) writes them again at their times.
public enum WriteRecording {
  /// One recorded write.
  public struct Entry: Sendable, Hashable {
    public var time: Duration
    public var characteristic: CharacteristicAddress
    public var value: [UInt8]
    public var type: WriteType
  }

  public static let header = "time,characteristic,value,type,answer"

  /// The writes in the file at `path`, each characteristic resolved by
  /// `resolve`; every problem is a `ScenarioError` at its line and column.
  public static func read(
    path: String, keys: [String], resolve: (String) -> CharacteristicAddress?
  ) throws(ScenarioError) -> [Entry] {
    guard let data = FileManager.default.contents(atPath: path) else {
      let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
      throw ScenarioError(.badRecording, file: path, line: 0, column: 0, "the recording of writes \(reason)")
    }
    let table = CSVTable(String(decoding: data, as: UTF8.self))
    guard let first = table.rows.first, first.fields.map(\.text) == header.split(separator: ",").map(String.init)
    else {
      throw ScenarioError(
        .badRecording, file: path, line: table.rows.first?.line ?? 1, column: 1,
        "the recording of writes does not start with the header '\(header)'")
    }
    var entries: [Entry] = []
    for row in table.rows.dropFirst() {
      guard row.fields.count == 5 else {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: row.fields.count > 5 ? row.fields[5].column : row.end,
          "a row has \(row.fields.count) fields", expected: "5: " + header.replacingOccurrences(of: ",", with: ", "))
      }
      let fields = row.fields
      guard let seconds = Double(fields[0].text), seconds.isFinite else {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: fields[0].column, "'time' is not a time in seconds",
          expected: "a number", found: "'\(fields[0].text)'")
      }
      guard let address = resolve(fields[1].text) else {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: fields[1].column,
          "the profile has no characteristic '\(fields[1].text)' that takes writes",
          expected: "one of " + keys.joined(separator: ", "))
      }
      guard let value = HexBytes.parse(fields[2].text) else {
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: fields[2].column, "'value' is not hex bytes",
          expected: "hex like 0a1b2c", found: "'\(fields[2].text)'")
      }
      let type: WriteType
      switch fields[3].text {
      case "request": type = .withResponse
      case "command": type = .withoutResponse
      default:
        throw ScenarioError(
          .badRecording, file: path, line: row.line, column: fields[3].column, "'type' is not a kind of write",
          expected: "request or command", found: "'\(fields[3].text)'")
      }
      entries.append(Entry(time: .seconds(seconds), characteristic: address, value: value, type: type))
    }
    return entries
  }
}
