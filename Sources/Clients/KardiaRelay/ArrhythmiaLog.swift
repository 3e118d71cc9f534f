#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The Kardia app's list of abnormal events (`arrhythmiaTimes`): one entry per
/// *fresh* arrhythmia, that is each time the reported status code changes to
/// `"404"` from anything else. Repeated `"404"` reports add nothing; any other
/// code in between, or a BLE disconnect (the app then sets its last code back
/// to `"0"`), and then `"404"` again adds a new entry.
public struct ArrhythmiaLog: Hashable, Sendable {
  /// One abnormal episode, as the app's table listed it.
  public struct Entry: Hashable, Sendable {
    /// When the episode was first reported: the analysis's time, or when it was received.
    public var time: Date
    /// The heart rate in that first report, as sent.
    public var heartRateText: String

    public init(time: Date, heartRateText: String) {
      self.time = time
      self.heartRateText = heartRateText
    }

    /// Beats per minute, when the report had a number.
    public var heartRate: Double? { Double(heartRateText) }
  }

  /// The episodes, oldest first.
  public private(set) var entries: [Entry] = []
  /// The status code of the last analysis recorded (`lastCode` in the app), `"0"` at first.
  public private(set) var lastCode = KardiaStatusCode.notEnoughData

  public init() {}

  /// Takes one analysis into account; returns the new entry if it starts a fresh episode.
  /// `receivedAt` stands in for the time when the analysis carries none.
  @discardableResult
  public mutating func record(_ analysis: KardiaAnalysis, receivedAt: Date = Date()) -> Entry? {
    defer { lastCode = analysis.statusCode }
    guard analysis.statusCode == KardiaStatusCode.arrhythmia, lastCode != KardiaStatusCode.arrhythmia else {
      return nil
    }
    let entry = Entry(time: analysis.time ?? receivedAt, heartRateText: analysis.heartRateText)
    entries.append(entry)
    return entry
  }

  /// The board disconnected: as the app, the last code goes back to `"0"`, so
  /// an arrhythmia reported after a reconnect is a fresh episode.
  public mutating func bleDisconnected() {
    lastCode = KardiaStatusCode.notEnoughData
  }

  /// Deletes an entry (the app let users swipe them away); the episode it
  /// belonged to does not come back while it lasts.
  public mutating func remove(at index: Int) {
    entries.remove(at: index)
  }
}
