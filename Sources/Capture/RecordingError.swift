/// Why `LiveRecorder` could not record a peripheral.
public struct RecordingError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The kind of problem, stable for scripts and tests to match on.
  public enum Kind: String, Hashable, Sendable {
    /// No peripheral matching the target showed up within the scan's limit.
    case notFound = "not-found"
    /// The connection could not be made.
    case connectFailed = "connect-failed"
    /// The link failed before the recording began (discovery, reading the database).
    case linkFailed = "link-failed"
    /// The recording was cancelled before it began.
    case interrupted
  }

  public var kind: Kind
  /// What went wrong, in a sentence.
  public var message: String

  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  public var description: String { message }
}
