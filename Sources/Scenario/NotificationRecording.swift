import Foundation
import GATT

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
  ///
  /// Read byte by byte rather than with `CSVTable`: an imported recording of
  /// hours of notifications has hundreds of thousands of rows.
  static func read(
    path: String, keys: [String], resolve: (String) -> CharacteristicAddress?
  ) throws(ScenarioError) -> [ProfileDeclaration.Replay.Entry] {
    guard let data = FileManager.default.contents(atPath: path) else {
      let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
      throw ScenarioError(.badRecording, file: path, line: 0, column: 0, "the recording \(reason)")
    }
    let bytes = [UInt8](data)
    var entries: [ProfileDeclaration.Replay.Entry] = []
    var resolved: [String: CharacteristicAddress] = [:]
    var previous = 0.0
    var sawHeader = false
    var line = 0
    var start = 0
    while start < bytes.count {
      var end = start
      while end < bytes.count, bytes[end] != 0x0A { end += 1 }
      line += 1
      var row = bytes[start..<end]
      start = end + 1
      if row.last == 0x0D { row = row.dropLast() }
      guard row.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { continue }
      let fields = Self.fields(row)
      func text(_ index: Int) -> String { String(decoding: fields[index].bytes, as: UTF8.self) }
      func fail(
        _ index: Int, _ message: String, expected: String? = nil, found: String? = nil, suggestion: String? = nil
      ) -> ScenarioError {
        ScenarioError(
          .badRecording, file: path, line: line, column: index < fields.count ? fields[index].column : row.count + 1,
          message, expected: expected, found: found, suggestion: suggestion)
      }
      guard sawHeader else {
        guard fields.map({ String(decoding: $0.bytes, as: UTF8.self) }) == ["time", "characteristic", "value"] else {
          throw ScenarioError(
            .badRecording, file: path, line: line, column: 1, "the recording's header is not '\(header)'",
            found: "'" + String(decoding: row, as: UTF8.self) + "'")
        }
        sawHeader = true
        continue
      }
      guard fields.count == 3 else {
        throw fail(3, "a row has \(fields.count) fields", expected: "3: time, characteristic, value")
      }
      guard let seconds = Double(text(0)), seconds.isFinite, seconds >= 0 else {
        throw fail(0, "'time' is not a time in seconds", expected: "a number ≥ 0", found: "'\(text(0))'")
      }
      guard seconds >= previous else {
        throw fail(0, "time goes backwards", expected: "at least \(previous)", found: "\(seconds)")
      }
      previous = seconds
      let key = text(1)
      let address: CharacteristicAddress
      if let known = resolved[key] {
        address = known
      } else if let found = resolve(key) {
        resolved[key] = found
        address = found
      } else {
        throw fail(
          1, "the profile has no characteristic '\(key)' that notifies or indicates",
          expected: "one of " + keys.joined(separator: ", "),
          suggestion: ScenarioDocument.closest(to: key, in: keys).map { "did you mean '\($0)'?" })
      }
      guard let value = HexBytes.parse(fields[2].bytes) else {
        throw fail(2, "'value' is not hex bytes", expected: "hex like 0a1b2c", found: "'\(text(2))'")
      }
      entries.append(.init(time: .seconds(seconds), characteristic: address, value: value))
    }
    guard sawHeader else {
      throw ScenarioError(
        .badRecording, file: path, line: 1, column: 1, "the recording is empty", expected: "the header '\(header)'")
    }
    return entries
  }

  /// A row's comma-separated fields without surrounding spaces, each with its 1-based column.
  private static func fields(_ row: ArraySlice<UInt8>) -> [(bytes: ArraySlice<UInt8>, column: Int)] {
    var fields: [(bytes: ArraySlice<UInt8>, column: Int)] = []
    var start = row.startIndex
    while true {
      var end = start
      while end < row.endIndex, row[end] != 0x2C { end += 1 }
      var first = start
      var last = end
      while first < last, row[first] == 0x20 || row[first] == 0x09 { first += 1 }
      while last > first, row[last - 1] == 0x20 || row[last - 1] == 0x09 { last -= 1 }
      fields.append((row[first..<last], first - row.startIndex + 1))
      guard end < row.endIndex else { break }
      start = end + 1
    }
    return fields
  }
}
