import Foundation
import Yams

/// Reads scenario files and checks them against the device models Doppel
/// has: every problem is reported with file, line and column, and nothing is
/// returned unless the whole file is valid.
public struct ScenarioParser: Sendable {
  /// The candidate nearest to `word`, when it is near enough to be a likely
  /// misspelling of it (for "did you mean" suggestions).
  public static func closest(to word: String, in candidates: [String]) -> String? {
    ScenarioDocument.closest(to: word, in: candidates)
  }

  /// The device models scenarios may use.
  public var models: [DeviceDescription]

  public init(models: [DeviceDescription]) { self.models = models }

  static let topKeys = ["scenario", "description", "seed", "duration", "devices", "timeline", "expect"]
  static let deviceKeys = [
    "id", "model", "name", "serial", "adapter", "advertise", "config", "streams", "client", "profile",
  ]

  /// Reads and checks the scenario at `path`.
  public func parse(file path: String) throws(ScenarioValidationError) -> Scenario {
    guard let data = FileManager.default.contents(atPath: path) else {
      let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
      throw ScenarioValidationError([ScenarioError(.unreadable, file: path, line: 0, column: 0, "the file \(reason)")])
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw ScenarioValidationError([
        ScenarioError(.unreadable, file: path, line: 0, column: 0, "the file is not UTF-8 text")
      ])
    }
    return try parse(yaml: text, file: path)
  }

  /// Checks the scenario in `yaml`; `file` names it in errors and anchors recordings' relative paths.
  public func parse(yaml: String, file: String) throws(ScenarioValidationError) -> Scenario {
    let document = ScenarioDocument(file: file)
    let root: Node
    do {
      guard let node = try Yams.compose(yaml: yaml) else {
        throw ScenarioValidationError([
          ScenarioError(
            .missingKey, file: file, line: 1, column: 1, "the file is empty", expected: "a scenario mapping")
        ])
      }
      root = node
    } catch let error as ScenarioValidationError {
      throw error
    } catch {
      throw ScenarioValidationError([Self.syntaxError(error, file: file)])
    }
    let scenario = ScenarioReader(parser: self, document: document).read(root)
    guard document.errors.isEmpty, let scenario else {
      // In file order; errors at one place keep the order they were found in.
      let ordered = document.errors.enumerated().sorted {
        ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset)
      }
      throw ScenarioValidationError(ordered.map(\.element))
    }
    return scenario
  }

  /// The 1-based line and column (in Unicode scalars) of the byte at `offset`.
  static func position(ofByte offset: Int, in text: String) -> (line: Int, column: Int) {
    var line = 1
    var column = 1
    var bytes = 0
    for scalar in text.unicodeScalars {
      if bytes >= offset { break }
      bytes += String(scalar).utf8.count
      if scalar == "\n" {
        line += 1
        column = 1
      } else {
        column += 1
      }
    }
    return (line, column)
  }

  static func syntaxError(_ error: any Error, file: String) -> ScenarioError {
    switch error as? YamlError {
    case .duplicatedKeysInMapping(let keys, let context):
      return ScenarioError(
        .duplicateKey, file: file, line: context.mark.line, column: context.mark.column,
        "'\(keys.joined(separator: "', '"))' is given twice", suggestion: "keep one of them")
    case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
      .composer(let context, let problem, let mark, _):
      let about = context.map { " \($0.text)" } ?? ""
      return ScenarioError(
        .syntax, file: file, line: mark.line, column: mark.column, "not valid YAML: \(problem)\(about)")
    case .reader(let problem, let offset, let value, let yaml):
      // The reader's mark is a byte offset: its line and column, counted as the scanner counts them.
      let (line, column) = Self.position(ofByte: offset ?? 0, in: yaml)
      let character = value >= 0 ? String(format: " (character U+%04X)", value) : ""
      return ScenarioError(
        .syntax, file: file, line: line, column: column, "not readable YAML: \(problem)\(character)",
        suggestion: "scenario files are UTF-8 text without control characters (tabs and newlines aside)")
    default:
      return ScenarioError(.syntax, file: file, line: 0, column: 0, "not valid YAML: \(error)")
    }
  }
}
