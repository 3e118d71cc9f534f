import BlendMicroClient
import Foundation
import KardiaRelay
import Testing

/// The app's rule: log an arrhythmia when the reported status changes to it.
struct ArrhythmiaLogTests {
  static let t0 = Date(timeIntervalSince1970: 1_750_000_000)

  /// Records one analysis per status, a second apart; returns the seconds of the entries.
  static func entries(_ statuses: [HeartRateAnalysis.Status]) -> [Double] {
    var log = ArrhythmiaLog()
    for (second, status) in statuses.enumerated() {
      log.record(KardiaAnalysis(heartRate: 70, status: status, time: t0 + Double(second)))
    }
    return log.entries.map { $0.time.timeIntervalSince(t0) }
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
    let fresh = log.record(KardiaAnalysis(heartRate: 95, status: .arrhythmia), receivedAt: received)
    #expect(fresh == ArrhythmiaLog.Entry(time: received, heartRate: 95))
    #expect(log.record(KardiaAnalysis(heartRate: 97, status: .arrhythmia), receivedAt: received + 1) == nil)
    #expect(log.entries == [ArrhythmiaLog.Entry(time: received, heartRate: 95)])
  }

  @Test func deletingAnEntryDoesNotBringItsEpisodeBack() {
    var log = ArrhythmiaLog()
    log.record(KardiaAnalysis(heartRate: 90, status: .arrhythmia, time: Self.t0))
    log.remove(at: 0)
    log.record(KardiaAnalysis(heartRate: 90, status: .arrhythmia, time: Self.t0 + 1))
    #expect(log.entries.isEmpty)
    log.record(KardiaAnalysis(heartRate: 70, status: .normal, time: Self.t0 + 2))
    log.record(KardiaAnalysis(heartRate: 90, status: .arrhythmia, time: Self.t0 + 3))
    #expect(log.entries.map(\.time) == [Self.t0 + 3])
  }
}
