/// What the SDK's calls fail with. The document only says `Error`; these
/// cases and their codes are this project's.
public struct ArctopSDKError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Code: Int, Sendable {
    /// A call before `initializeArctop` succeeded, or after `deinitializeArctop`.
    case notInitialized = 1
    /// The API key was refused.
    case invalidAPIKey = 2
    /// The user is not logged in.
    case notLoggedIn = 3
    /// The user's calibration is not `modelsAvailable`.
    case notCalibrated = 4
    /// `connectSensorDevice` named a device no scan has reported.
    case unknownDevice = 5
    /// The call needs a connected sensor device.
    case notConnected = 6
    /// A session is already running, or none is.
    case sessionState = 7
    /// A prediction name not in `ArctopSDKPredictions`.
    case unknownPrediction = 8
    /// Arctop's prediction service did not answer, or answered with an error.
    case serviceUnreachable = 9
    /// The prediction service did not answer in time.
    case serviceTimeout = 10
  }

  public var code: Code
  public var message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  public var description: String { "\(code) (\(code.rawValue)): \(message)" }
}
