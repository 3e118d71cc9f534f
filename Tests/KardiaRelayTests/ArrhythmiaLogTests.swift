import BlendMicroClient
import Foundation
import KardiaRelay
import Testing

/// The app's rule: log an arrhythmia when the reported status code changes to "404".
struct ArrhythmiaLogTests {
  static let t0 = Date(timeIntervalSince1970: 1_750_000_000)

  /// Records one analysis per status, a second apart; returns the seconds of the entries.
  static func entries(_ statuses: [HeartRateAnalysis.Status]) -> [Double] {
    var log = ArrhythmiaLog()
    for (second, status) in statuses.enumerated() {
      log.record(analysis("70", status, time: t0 + Double(second)))
    }
    return log.entries.map { $0.time.timeIntervalSince(t0) }
  }

  static func analysis(_ rate: String, _ status: HeartRateAnalysis.Status, time: Date? = nil) -> KardiaAnalysis {
    KardiaAnalysis(statusCode: KardiaStatusCode.code(for: status), heartRateText: rate, time: time)
  }

  @Test func repeatedArrhythmiaReportsAreOneEpisode() {
    #expect(Self.entries([.insufficientData, .normal, .arrhythmia, .arrhythmia, .arrhythmia]) == [2])
  }

  @Test func normalThenArrhythmiaAgainIsANewEpisode() {
    #expect(Self.entries([.normal, .arrhythmia, .arrhythmia, .normal, .normal, .arrhythmia, .normal]) == [1, 5])
  }

  @Test func aFirstReportOfArrhythmiaCounts() {
    #expect(Self.entries([.arrhythmia, .arrhythmia]) == [0])
    // Any other status in between ends the episode, as the app compared statuses only.
    #expect(Self.entries([.arrhythmia, .insufficientData, .arrhythmia]) == [0, 2])
    #expect(Self.entries([.normal, .normal, .insufficientData]) == [])
  }

  @Test func recordReturnsTheFreshEntryAndUsesTheReceiptTimeWhenTheAnalysisHasNone() {
    var log = ArrhythmiaLog()
    let received = Self.t0 + 100
    let fresh = log.record(Self.analysis("95", .arrhythmia), receivedAt: received)
    #expect(fresh == ArrhythmiaLog.Entry(time: received, heartRateText: "95"))
    #expect(log.record(Self.analysis("97", .arrhythmia), receivedAt: received + 1) == nil)
    #expect(log.entries == [ArrhythmiaLog.Entry(time: received, heartRateText: "95")])
  }

  @Test func deletingAnEntryDoesNotBringItsEpisodeBack() {
    var log = ArrhythmiaLog()
    log.record(Self.analysis("90", .arrhythmia, time: Self.t0))
    log.remove(at: 0)
    log.record(Self.analysis("90", .arrhythmia, time: Self.t0 + 1))
    #expect(log.entries.isEmpty)
    log.record(Self.analysis("70", .normal, time: Self.t0 + 2))
    log.record(Self.analysis("90", .arrhythmia, time: Self.t0 + 3))
    #expect(log.entries.map(\.time) == [Self.t0 + 3])
  }

  @Test func aBLEDisconnectEndsTheEpisodeAsTheAppsLastCodeGoesBackTo0() {
    var log = ArrhythmiaLog()
    #expect(log.lastCode == "0")
    log.record(Self.analysis("90", .arrhythmia, time: Self.t0))
    #expect(log.lastCode == "404")
    log.bleDisconnected()
    #expect(log.lastCode == "0")
    log.record(Self.analysis("91", .arrhythmia, time: Self.t0 + 5))
    #expect(log.entries == [.init(time: Self.t0, heartRateText: "90"), .init(time: Self.t0 + 5, heartRateText: "91")])
    #expect(log.entries.map(\.heartRate) == [90, 91])
  }

  @Test func anUnknownCodeIsNotAnArrhythmiaButEndsAnEpisode() {
    var log = ArrhythmiaLog()
    log.record(KardiaAnalysis(statusCode: "404", heartRateText: "- -", time: Self.t0))
    log.record(KardiaAnalysis(statusCode: "202", heartRateText: "80", time: Self.t0 + 1))
    log.record(KardiaAnalysis(statusCode: "404", heartRateText: "81", time: Self.t0 + 2))
    #expect(log.entries.map(\.heartRateText) == ["- -", "81"])
    #expect(log.entries.first?.heartRate == nil)
  }
}
