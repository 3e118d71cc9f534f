import BlendMicroClient

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One analysis the Kardia server sent back on `node.js`:
/// `{"heartRate": "72", "statusCode": "200"}`, strings as in the app.
public struct KardiaAnalysis: Hashable, Sendable {
  /// The status code as sent: `"0"`, `"200"` or `"404"` (see `KardiaStatusCode`).
  public var statusCode: String
  /// The heart rate as sent, shown as it is by the app: whole beats per minute
  /// (`"72"`), or `"- -"` while the server has seen fewer than two R peaks.
  public var heartRateText: String
  /// The time of the latest sample the analysis covers, when the server says it
  /// (Doppel's server does, as `"time"`; the app ignored extra keys).
  public var time: Date?

  public init(statusCode: String, heartRateText: String, time: Date? = nil) {
    self.statusCode = statusCode
    self.heartRateText = heartRateText
    self.time = time
  }

  /// Beats per minute, when `heartRateText` is a number.
  public var heartRate: Double? { Double(heartRateText) }

  /// The rhythm `statusCode` stands for; `nil` for a code the app does not know.
  public var status: HeartRateAnalysis.Status? { KardiaStatusCode.status(for: statusCode) }

  /// What the app's status view shows for `statusCode` (its dictionary), if it knows the code.
  public var statusDescription: String? { KardiaStatusCode.descriptions[statusCode] }
}
