import Foundation

/// An in-process stand-in for Arctop's cloud: it checks API keys, knows
/// whether the user is logged in and calibrated, turns band powers into
/// predictions, and takes finished sessions. A test or scenario can make it
/// fail (every call throws `serviceUnreachable`) or stall (calls wait until
/// the caller gives up).
///
/// The predictions are this project's formulas, not Arctop's models: focus
/// follows the engagement index β / (α + θ), enjoyment the frontal alpha
/// asymmetry, flow their mean, sleep a slow-wave share over 75 %, blink the
/// window's blink flag; each 0–100 with 50 neutral (sleep and blink 0 or 1).
public actor ArctopPredictionService {
  /// How the service behaves now.
  public enum Availability: String, Sendable, CaseIterable {
    case up, down, stall
  }

  /// An API key the service refuses (any other non-empty key is accepted).
  public static let refusedKey = "refused-key"

  public private(set) var availability: Availability
  public private(set) var calibration: UserCalibrationStatus
  public private(set) var loggedIn: Bool
  /// Sessions uploaded so far: the prediction name and the windows it saw.
  public private(set) var uploads: [(prediction: String, windows: Int)] = []
  /// Prediction requests answered.
  public private(set) var predictionsServed = 0
  /// Engagement (β / (α + θ)) at which focus is 50.
  let neutralEngagement: Double
  private var clock: any Clock<Duration>

  public init(
    availability: Availability = .up, calibration: UserCalibrationStatus = .modelsAvailable, loggedIn: Bool = true,
    neutralEngagement: Double = 0.3, clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.availability = availability
    self.calibration = calibration
    self.loggedIn = loggedIn
    self.neutralEngagement = neutralEngagement
    self.clock = clock
  }

  /// Times stalls on `clock` from now on (the run's clock, virtual or wall).
  public func setClock(_ clock: any Clock<Duration>) { self.clock = clock }

  /// Makes the service answer, fail or stall from now on.
  public func setAvailability(_ availability: Availability) { self.availability = availability }

  /// Checks an API key.
  func validate(apiKey: String) async throws(ArctopSDKError) {
    try await reachable()
    guard !apiKey.isEmpty, apiKey != Self.refusedKey else { throw ArctopSDKError(.invalidAPIKey, "API key refused") }
  }

  func isLoggedIn() async throws(ArctopSDKError) -> Bool {
    try await reachable()
    return loggedIn
  }

  func logIn() async throws(ArctopSDKError) {
    try await reachable()
    loggedIn = true
  }

  func calibrationStatus() async throws(ArctopSDKError) -> UserCalibrationStatus {
    try await reachable()
    return calibration
  }

  /// Opens a session for `prediction`.
  func startSession(_ prediction: String) async throws(ArctopSDKError) {
    try await reachable()
    guard loggedIn else { throw ArctopSDKError(.notLoggedIn, "log the user in first") }
    guard calibration == .modelsAvailable else {
      throw ArctopSDKError(.notCalibrated, "the user's calibration is \(calibration), not modelsAvailable")
    }
  }

  /// The values for one analysis window; with `qaPassed` false, every value is -1.
  func predict(_ powers: BandPowers, prediction: String, qaPassed: Bool) async throws(ArctopSDKError)
    -> [String: Float]
  {
    try await reachable()
    predictionsServed += 1
    guard qaPassed else {
      return prediction == ArctopSDKPredictions.sleep
        ? [ArctopSDKPredictions.sleepDetection: -1]
        : [ArctopSDKPredictions.focus: -1, ArctopSDKPredictions.enjoyment: -1, ArctopSDKPredictions.flow: -1]
    }
    if prediction == ArctopSDKPredictions.sleep {
      let slow = powers.total > 0 ? (powers.delta + powers.theta) / powers.total : 0
      return [ArctopSDKPredictions.sleepDetection: slow > 0.75 ? 1 : 0]
    }
    let engagement = powers.beta / max(1e-9, powers.alpha + powers.theta)
    let ratio = engagement / neutralEngagement
    let focus = 100 * ratio * ratio / (ratio * ratio + 1)
    let enjoyment = 50 + 50 * tanh(powers.frontalAsymmetry / 2)
    return [
      ArctopSDKPredictions.focus: Float(focus), ArctopSDKPredictions.enjoyment: Float(enjoyment),
      ArctopSDKPredictions.flow: Float((focus + enjoyment) / 2), ArctopSDKPredictions.blink: powers.blink ? 1 : 0,
    ]
  }

  /// Takes a finished session.
  func upload(prediction: String, windows: Int) async throws(ArctopSDKError) {
    try await reachable()
    uploads.append((prediction, windows))
  }

  /// Throws when down; when stalled, waits until the caller is cancelled.
  private func reachable() async throws(ArctopSDKError) {
    switch availability {
    case .up: return
    case .down: throw ArctopSDKError(.serviceUnreachable, "prediction service unreachable")
    case .stall:
      while availability == .stall {
        do { try await clock.sleep(for: .seconds(1)) } catch {
          throw ArctopSDKError(.serviceTimeout, "prediction service did not answer")
        }
      }
      if availability == .down { throw ArctopSDKError(.serviceUnreachable, "prediction service unreachable") }
    }
  }
}
