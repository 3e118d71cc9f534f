import BlendMicroClient

/// The Kardia app's status codes: strings, as the server sent them and as the
/// app's dictionary (`statusCodes` in its ViewController) looked them up.
public enum KardiaStatusCode {
  /// Not enough data for an analysis; also what the app shows when the board is disconnected.
  public static let notEnoughData = "0"
  /// Normal sinus rhythm.
  public static let normal = "200"
  /// Arrhythmia.
  public static let arrhythmia = "404"

  /// The app's dictionary: status code to the text its status view shows.
  public static let descriptions: [String: String] = [notEnoughData: "N/A", normal: "NSR", arrhythmia: "ARR"]

  /// The code for an analysis.
  public static func code(for status: HeartRateAnalysis.Status) -> String {
    switch status {
    case .insufficientData: notEnoughData
    case .normal: normal
    case .arrhythmia: arrhythmia
    }
  }

  /// The analysis a code stands for; `nil` for a code the app does not know.
  public static func status(for code: String) -> HeartRateAnalysis.Status? {
    switch code {
    case notEnoughData: .insufficientData
    case normal: .normal
    case arrhythmia: .arrhythmia
    default: nil
    }
  }
}
