/// A CSV file's non-blank lines split into comma-separated fields, each with
/// its line and column, so that every reader of recordings reports a bad
/// value at its place. The one CSV reader: recordings (`csv:` sources) and
/// E4 Connect exports both read through it.
///
/// Fields are not quoted: the recordings Doppel reads are numbers.
public struct CSVTable: Sendable {
  /// One non-blank line.
  public struct Row: Sendable {
    /// One field: its text without surrounding spaces, and the 1-based
    /// column of its first character.
    public struct Field: Sendable {
      public var text: String
      public var column: Int
    }

    /// 1-based line number in the file.
    public var line: Int
    public var fields: [Field]
    /// 1-based column just past the line's end.
    public var end: Int
  }

  public var rows: [Row]

  /// Splits `text`; `\n`, `\r\n` and `\r` end lines, blank lines are skipped.
  public init(_ text: String) {
    var rows: [Row] = []
    // "\r\n" is one Character in Swift, and a newline.
    for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
      guard line.contains(where: { !$0.isWhitespace }) else { continue }
      var fields: [Row.Field] = []
      var column = 1
      for part in line.split(separator: ",", omittingEmptySubsequences: false) {
        let leading = part.prefix { $0 == " " || $0 == "\t" }.count
        let text = String(part.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        fields.append(Row.Field(text: text, column: column + leading))
        column += part.count + 1
      }
      rows.append(Row(line: index + 1, fields: fields, end: line.count + 1))
    }
    self.rows = rows
  }
}
