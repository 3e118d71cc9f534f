/// Why a line is not a well-formed MethodSCRIPT data package.
public struct MethodScriptFormatError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The text that could not be decoded.
  public var text: String
  /// What is wrong with it.
  public var reason: String

  public init(_ text: String, _ reason: String) {
    self.text = text
    self.reason = reason
  }

  public var description: String { "malformed MethodSCRIPT package '\(text)': \(reason)" }
}
