import Foundation
import Yams

/// A YAML node of a scenario file and where it is, with the readers the
/// parser uses. Every reader records a `ScenarioError` and returns `nil` when
/// the node is not what was asked for, so parsing goes on and reports every
/// problem of a file at once.
final class ScenarioDocument {
  let file: String
  private(set) var errors: [ScenarioError] = []
  /// Every device id the file declares, valid device or not, so that a
  /// reference to a device already reported as invalid adds no error of its own.
  var declaredDeviceIDs: [String] = []

  init(file: String) { self.file = file }

  /// Adds problems found elsewhere (in a file this one names).
  func absorb(_ others: [ScenarioError]) { errors += others }

  /// `path` as written in this file: relative paths start from the file's folder.
  func resolve(_ path: String) -> String {
    guard !path.hasPrefix("/") else { return path }
    let folder = (file as NSString).deletingLastPathComponent
    return folder.isEmpty ? path : folder + "/" + path
  }

  func location(_ node: Node?) -> SourceLocation {
    let mark = node?.mark
    return SourceLocation(file: file, line: mark?.line ?? 0, column: mark?.column ?? 0)
  }

  func fail(
    _ code: ScenarioError.Code, at node: Node?, _ message: String, expected: String? = nil, found: String? = nil,
    suggestion: String? = nil
  ) {
    let place = location(node)
    errors.append(
      ScenarioError(
        code, file: file, line: place.line, column: place.column, message, expected: expected, found: found,
        suggestion: suggestion))
  }

  /// Records that `name` is not one of `candidates`, listing them and
  /// suggesting the closest as a likely misspelling.
  func failUnknown(
    _ code: ScenarioError.Code, at node: Node?, _ message: String, name: String, among candidates: [String]
  ) {
    fail(
      code, at: node, message,
      expected: candidates.isEmpty ? "nothing: there are none" : "one of " + candidates.joined(separator: ", "),
      suggestion: Self.closest(to: name, in: candidates).map { "did you mean '\($0)'?" })
  }

  /// "a" or "an" before a word, as it sounds ("an e4", "a blend-micro").
  static func article(_ word: String) -> String {
    guard let first = word.lowercased().first else { return "a" }
    return "aeio".contains(first) ? "an" : "a"
  }

  /// How a node reads in an error message.
  static func describe(_ node: Node) -> String {
    switch node {
    case .scalar(let scalar):
      if scalar.style == .plain, scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null" {
        return "nothing"
      }
      return "'\(scalar.string)'"
    case .mapping: return "a mapping"
    case .sequence: return "a list"
    case .alias: return "an alias"
    }
  }

  // MARK: Structure

  /// A mapping's entries in file order, with keys as text. Checks keys
  /// against `allowed` (suggesting the closest for a misspelt one), reports
  /// duplicates and the `required` keys that are absent.
  func entries(
    _ node: Node, of what: String, allowed: [String], required: [String] = []
  ) -> [(key: String, keyNode: Node, value: Node)]? {
    guard case .mapping(let mapping) = node else {
      fail(
        .wrongType, at: node, "\(what) must be a mapping", expected: "keys: \(allowed.joined(separator: ", "))",
        found: Self.describe(node))
      return nil
    }
    var result: [(String, Node, Node)] = []
    var seen: Set<String> = []
    for (keyNode, value) in mapping {
      guard case .scalar(let scalar) = keyNode else {
        fail(.wrongType, at: keyNode, "a key in \(what) must be text", found: Self.describe(keyNode))
        continue
      }
      let key = scalar.string
      if !seen.insert(key).inserted {
        fail(.duplicateKey, at: keyNode, "'\(key)' is given twice in \(what)", suggestion: "keep one of them")
        continue
      }
      if !allowed.contains(key) {
        fail(
          .unknownKey, at: keyNode, "unknown key '\(key)' in \(what)",
          expected: allowed.isEmpty ? "no keys: there are none" : "one of " + allowed.joined(separator: ", "),
          suggestion: Self.closest(to: key, in: allowed).map { "did you mean '\($0)'?" })
        continue
      }
      result.append((key, keyNode, value))
    }
    for key in required where !seen.contains(key) {
      fail(.missingKey, at: node, "\(what) needs '\(key)'")
    }
    return result
  }

  func sequence(_ node: Node, of what: String) -> [Node]? {
    if case .sequence(let sequence) = node { return Array(sequence) }
    fail(.wrongType, at: node, "\(what) must be a list", expected: "a list ('- ' entries)", found: Self.describe(node))
    return nil
  }

  // MARK: Scalars

  private func scalar(_ node: Node) -> Node.Scalar? {
    if case .scalar(let scalar) = node { return scalar }
    return nil
  }

  func text(_ node: Node, _ what: String) -> String? {
    guard let scalar = scalar(node), !(scalar.style == .plain && scalar.string.isEmpty) else {
      fail(.wrongType, at: node, "\(what) must be text", expected: "text", found: Self.describe(node))
      return nil
    }
    return scalar.string
  }

  func number(_ node: Node, _ what: String, in range: ClosedRange<Double>? = nil) -> Double? {
    guard let scalar = scalar(node), scalar.style == .plain, let value = Double(scalar.string), value.isFinite else {
      fail(.wrongType, at: node, "\(what) must be a number", expected: "a number", found: Self.describe(node))
      return nil
    }
    if let range, !range.contains(value) {
      fail(
        .invalidValue, at: node, "\(what) is out of range", expected: "\(range.lowerBound) to \(range.upperBound)",
        found: scalar.string)
      return nil
    }
    return value
  }

  func integer(_ node: Node, _ what: String, in range: ClosedRange<Int>? = nil) -> Int? {
    guard let scalar = scalar(node), scalar.style == .plain, let value = Int(scalar.string) else {
      fail(
        .wrongType, at: node, "\(what) must be a whole number", expected: "a whole number", found: Self.describe(node))
      return nil
    }
    if let range, !range.contains(value) {
      fail(
        .invalidValue, at: node, "\(what) is out of range", expected: "\(range.lowerBound) to \(range.upperBound)",
        found: scalar.string)
      return nil
    }
    return value
  }

  func seed(_ node: Node, _ what: String) -> UInt64? {
    guard let scalar = scalar(node), scalar.style == .plain, let value = UInt64(scalar.string) else {
      fail(
        .wrongType, at: node, "\(what) must be a whole number from 0 to \(UInt64.max)",
        expected: "a whole number", found: Self.describe(node))
      return nil
    }
    return value
  }

  func flag(_ node: Node, _ what: String) -> Bool? {
    guard let scalar = scalar(node), scalar.style == .plain, ["true", "false"].contains(scalar.string) else {
      fail(.wrongType, at: node, "\(what) must be true or false", expected: "true or false", found: Self.describe(node))
      return nil
    }
    return scalar.string == "true"
  }

  func duration(_ node: Node, _ what: String, allowZero: Bool = false) -> Duration? {
    let expected = "a duration like 500ms, 10s, 2m or 1h"
    guard let scalar = scalar(node), let value = ScenarioDuration.parse(scalar.string) else {
      var suggestion: String?
      if let scalar = self.scalar(node), Double(scalar.string) != nil { suggestion = "add a unit: '\(scalar.string)s'" }
      fail(
        .wrongType, at: node, "\(what) must be a duration", expected: expected, found: Self.describe(node),
        suggestion: suggestion)
      return nil
    }
    if value == .zero && !allowZero {
      fail(.invalidValue, at: node, "\(what) must be longer than zero", expected: expected, found: scalar.string)
      return nil
    }
    return value
  }

  /// `72 ± 2`, `100 +- 5%`, or `{value: 72, within: 2}` / `{value: 100, within: 5%}`.
  func tolerance(_ node: Node, _ what: String) -> Tolerance? {
    let expected = "'VALUE ± TOLERANCE' (e.g. 72 ± 2 or 100 ± 5%) or {value: V, within: T}"
    if case .mapping = node {
      guard let entries = entries(node, of: what, allowed: ["value", "within"], required: ["value", "within"]),
        let valueNode = entries.first(where: { $0.key == "value" })?.value,
        let withinNode = entries.first(where: { $0.key == "within" })?.value,
        let value = number(valueNode, "\(what) value"),
        let within = text(withinNode, "\(what) tolerance")
      else { return nil }
      return tolerance(value: value, within: within, node: withinNode, what: what, expected: expected)
    }
    guard let text = scalar(node)?.string else {
      fail(
        .wrongType, at: node, "\(what) must be a value with a tolerance", expected: expected, found: Self.describe(node)
      )
      return nil
    }
    let parts = text.replacingOccurrences(of: "+-", with: "±").split(separator: "±", omittingEmptySubsequences: false)
    guard parts.count == 2, let value = Double(String(parts[0]).trimmingSpaces), value.isFinite else {
      fail(.wrongType, at: node, "\(what) must be a value with a tolerance", expected: expected, found: "'\(text)'")
      return nil
    }
    return tolerance(value: value, within: String(parts[1]).trimmingSpaces, node: node, what: what, expected: expected)
  }

  private func tolerance(value: Double, within: String, node: Node, what: String, expected: String) -> Tolerance? {
    let relative = within.hasSuffix("%")
    guard let amount = Double(relative ? String(within.dropLast()).trimmingSpaces : within), amount >= 0,
      amount.isFinite
    else {
      fail(
        .invalidValue, at: node, "\(what) has a bad tolerance", expected: "a number ≥ 0, or a percentage like 5%",
        found: "'\(within)'")
      return nil
    }
    return Tolerance(value, within: relative ? amount / 100 : amount, relative: relative)
  }

  /// A setting's value, checked against its kind.
  func setting(_ node: Node, _ spec: SettingSpec, _ what: String) -> SettingValue? {
    switch spec.kind {
    case .number(let range): return number(node, what, in: range).map(SettingValue.number)
    case .integer(let range): return integer(node, what, in: range).map(SettingValue.integer)
    case .text: return text(node, what).map(SettingValue.text)
    case .flag: return flag(node, what).map(SettingValue.flag)
    case .duration: return duration(node, what, allowZero: true).map(SettingValue.duration)
    case .choice(let choices):
      guard let value = text(node, what) else { return nil }
      guard choices.contains(value) else {
        fail(
          .invalidValue, at: node, "\(what) is not one of its choices", expected: spec.kind.expectation,
          found: "'\(value)'", suggestion: Self.closest(to: value, in: choices).map { "did you mean '\($0)'?" })
        return nil
      }
      return .text(value)
    }
  }

  // MARK: Suggestions

  /// The candidate nearest to `word` by edit distance, if it is near enough to be a likely misspelling.
  static func closest(to word: String, in candidates: [String]) -> String? {
    let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
    let limit = max(2, word.count / 3)
    return best.1 <= limit ? best.0 : nil
  }

  static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
      var current = [i] + Array(repeating: 0, count: b.count)
      for j in 1...b.count {
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      previous = current
    }
    return previous[b.count]
  }
}
