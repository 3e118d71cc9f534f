import BlendMicroClient

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The Kardia app's list of abnormal events: one entry per *fresh* arrhythmia,
/// that is each time the reported status changes to arrhythmia from anything
/// else (or the first report is arrhythmia). Repeated arrhythmia reports add
/// nothing; normal (or insufficient data) and then arrhythmia again adds a new entry.
public struct ArrhythmiaLog: Hashable, Sendable {
  /// One abnormal episode, as the app's table listed it.
  public struct Entry: Hashable, Sendable {
    /// When the episode was first reported: the analysis's time, or when it was received.
    public var time: Date
    /// The heart rate in that first report.
    public var heartRate: Double?

    public init(time: Date, heartRate: Double?) {
      self.time = time
      self.heartRate = heartRate
    }
  }

  /// The episodes, oldest first.
  public private(set) var entries: [Entry] = []
  /// The status of the last analysis recorded.
  public private(set) var lastStatus: HeartRateAnalysis.Status?

  public init() {}

  /// Takes one analysis into account; returns the new entry if it starts a fresh episode.
  /// `receivedAt` stands in for the time when the analysis carries none.
  @discardableResult
  public mutating func record(_ analysis: KardiaAnalysis, receivedAt: Date = Date()) -> Entry? {
    defer { lastStatus = analysis.status }
    guard analysis.status == .arrhythmia, lastStatus != .arrhythmia else { return nil }
    let entry = Entry(time: analysis.time ?? receivedAt, heartRate: analysis.heartRate)
    entries.append(entry)
    return entry
  }

  /// Deletes an entry (the app let users swipe them away); the episode it
  /// belonged to does not come back while it lasts.
  public mutating func remove(at index: Int) {
    entries.remove(at: index)
  }
}
