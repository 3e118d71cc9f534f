import BlendMicroClient

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One analysis the Kardia server sent back: `{"heartRate": …, "statusCode": …}`.
public struct KardiaAnalysis: Hashable, Sendable {
  /// Beats per minute; `nil` while the server has seen fewer than two R peaks.
  public var heartRate: Double?
  /// The rhythm (`statusCode` on the wire: 0 insufficient data, 1 normal, 2 arrhythmia).
  public var status: HeartRateAnalysis.Status
  /// The time of the latest sample the analysis covers, when the server says it
  /// (Doppel's server does, as `"time"`; the Kardia app ignored extra keys).
  public var time: Date?

  public init(heartRate: Double?, status: HeartRateAnalysis.Status, time: Date? = nil) {
    self.heartRate = heartRate
    self.status = status
    self.time = time
  }
}
