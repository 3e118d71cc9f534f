/// What is wrong with a scenario, and where: the file, line and column, what
/// was expected, what was found, and a suggested fix.
public struct ScenarioError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The kind of problem, stable for scripts and tests to match on.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The file could not be read.
    public static let unreadable = Code(rawValue: "unreadable")
    /// Not well-formed YAML.
    public static let syntax = Code(rawValue: "syntax")
    /// A key the format does not have at that place.
    public static let unknownKey = Code(rawValue: "unknown-key")
    /// A required key is absent.
    public static let missingKey = Code(rawValue: "missing-key")
    /// A key given twice in one mapping.
    public static let duplicateKey = Code(rawValue: "duplicate-key")
    /// A value of the wrong kind (a list where a number belongs, …).
    public static let wrongType = Code(rawValue: "wrong-type")
    /// A value of the right kind that is out of range or not one of the choices.
    public static let invalidValue = Code(rawValue: "invalid-value")
    /// A device model Doppel does not have.
    public static let unknownModel = Code(rawValue: "unknown-model")
    /// A reference to a device id, stream or action that is not declared.
    public static let unknownReference = Code(rawValue: "unknown-reference")
    /// A recorded data file that is missing or malformed.
    public static let badRecording = Code(rawValue: "bad-recording")
  }

  public var code: Code
  /// The scenario file (or recording) the problem is in.
  public var file: String
  /// 1-based line; 0 when the problem concerns the whole file.
  public var line: Int
  /// 1-based column; 0 when the problem concerns the whole file.
  public var column: Int
  /// What is wrong, in a sentence.
  public var message: String
  /// What the format wants there, when that helps.
  public var expected: String?
  /// What the file has there, when that helps.
  public var found: String?
  /// How to fix it, when there is a likely fix (e.g. the closest valid key).
  public var suggestion: String?

  public init(
    _ code: Code, file: String, line: Int, column: Int, _ message: String, expected: String? = nil,
    found: String? = nil, suggestion: String? = nil
  ) {
    self.code = code
    self.file = file
    self.line = line
    self.column = column
    self.message = message
    self.expected = expected
    self.found = found
    self.suggestion = suggestion
  }

  /// `file:line:column: error: message; expected …, found …; suggestion`.
  public var description: String {
    var text = line > 0 ? "\(file):\(line):\(column): error: \(message)" : "\(file): error: \(message)"
    var details: [String] = []
    if let expected { details.append("expected \(expected)") }
    if let found { details.append("found \(found)") }
    if !details.isEmpty { text += " (\(details.joined(separator: ", ")))" }
    if let suggestion { text += "; \(suggestion)" }
    return text
  }
}

/// Every problem found in a scenario file, in the order they appear.
public struct ScenarioValidationError: Error, Sendable, CustomStringConvertible {
  public var errors: [ScenarioError]

  public init(_ errors: [ScenarioError]) { self.errors = errors }

  public var description: String { errors.map(\.description).joined(separator: "\n") }
}
