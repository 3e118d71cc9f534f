import GATT

/// A failure the client reports: what kind, and what happened.
public struct EmStatPicoClientError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Code: Hashable, Sendable {
    /// There is no connection.
    case notConnected
    /// The device did not answer in time.
    case timeout
    /// Another command or script is still waiting for its answer.
    case busy
    /// The device answered with an error line `!XXXX…`: the code and the text after it.
    case device(code: UInt16, detail: String)
    /// The device answered something the client cannot read.
    case malformedResponse
    /// The device is not a VSP device (a characteristic is missing).
    case notSupported
    /// The device to connect to is not in the list of scanned devices.
    case notScanned
  }

  public var code: Code
  public var message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  /// The device's error code, when it answered with one.
  public var deviceErrorCode: UInt16? {
    if case .device(let code, _) = code { code } else { nil }
  }

  public var description: String { message }
}
