/// Bad input in an E4 Connect export: which file, where in it (1-based line
/// and column; 0 when the problem is the whole file), and what is wrong.
public struct E4ConnectExportError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The file's path (or its name, for contents given in memory).
  public var file: String
  /// 1-based line; 0 for the whole file.
  public var line: Int
  /// 1-based column (characters); 0 for the whole line or file.
  public var column: Int
  /// What is wrong, and what was expected.
  public var message: String

  public init(file: String, line: Int, column: Int, _ message: String) {
    self.file = file
    self.line = line
    self.column = column
    self.message = message
  }

  /// `file:line:column: message`, as compilers print it.
  public var description: String { "\(file):\(line):\(column): \(message)" }
}
