/// An error the firmware reports: a 4-hex-digit code, and for script errors
/// the line and column where parsing or execution failed.
///
/// Written `!XXXX` after the command character for a failed command (e.g.
/// `Z!0006`), and `!XXXX: Line L, Col C` for a script. The codes themselves
/// are Doppel's own table (PalmSens' is in the MethodSCRIPT manual, not
/// retrieved), except `0003` for an unknown command and `0006` for `Z` with no
/// script running, which follow PalmSens' examples.
public struct MethodScriptError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The error code.
  public var code: Code
  /// The script line (1 is the first line after `e`), for script errors.
  public var line: Int?
  /// The column (1-based) of the offending token, for script errors.
  public var column: Int?

  public init(_ code: Code, line: Int? = nil, column: Int? = nil) {
    self.code = code
    self.line = line
    self.column = column
  }

  /// The error codes this emulation reports.
  public enum Code: UInt16, Hashable, Sendable, CaseIterable {
    /// Something failed that has no more specific code.
    case unspecified = 0x0001
    /// The command character is not a command.
    case unknownCommand = 0x0003
    /// The command is not valid now (e.g. `Z` with no script running).
    case invalidState = 0x0006
    /// A line is longer than 128 characters.
    case lineTooLong = 0x0008
    /// A script line starts with a word that is not a MethodSCRIPT command.
    case unknownScriptCommand = 0x4001
    /// A script command has too few or too many arguments.
    case wrongArgumentCount = 0x4002
    /// An argument is not a number, variable or variable type where one is expected.
    case invalidArgument = 0x4003
    /// A variable is used before it is declared.
    case undeclaredVariable = 0x4004
    /// Loops do not match: `endloop` without a loop, a loop without `endloop`,
    /// or a measurement loop inside another.
    case loopMismatch = 0x4005
    /// `pck_add`/`pck_end` outside `pck_start` … `pck_end`, or a package left open.
    case packageMismatch = 0x4006
    /// An argument is outside what the instrument can do (a zero step, a
    /// negative rate, a current range the Pico lacks).
    case argumentOutOfRange = 0x4007
    /// The script has more lines than the device holds.
    case scriptTooLong = 0x4008
  }

  /// The text after `!`, e.g. `4001: Line 3, Col 1` or `0006`.
  public var text: String {
    let hex = String(code.rawValue, radix: 16, uppercase: true)
    var text = String(repeating: "0", count: 4 - hex.count) + hex
    if let line { text += ": Line \(line), Col \(column ?? 1)" }
    return text
  }

  public var description: String { "!" + text }
}
