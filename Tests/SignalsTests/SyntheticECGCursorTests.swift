import Signals
import Testing

struct SyntheticECGCursorTests {
  /// Two hours at 100 Hz, with an arrhythmia episode (irregular beats) in it.
  static let ecg = SyntheticECG(
    sampleRate: 100, heartRate: 72, noise: 0.01, arrhythmiaEpisodes: [1800...2400], seed: 9)

  @Test func consecutiveRangesFromACursorAreTheSamplesFromTheStart() {
    let whole = Self.ecg.samples(0..<720_000)
    var cursor = SyntheticECG.BeatCursor.start
    var pieces: [Double] = []
    for start in stride(from: 0, to: 720_000, by: 100) {
      pieces += Self.ecg.samples(start..<(start + 100), from: &cursor)
    }
    #expect(pieces == whole)
    // The cursor moved on with the ranges: the last one started near the end.
    #expect(cursor.time > 7190)
  }

  @Test func aRangeBeforeTheCursorStartsAgainFromTheFirstBeat() {
    var cursor = SyntheticECG.BeatCursor.start
    _ = Self.ecg.samples(360_000..<360_100, from: &cursor)
    #expect(cursor.time > 3590)
    let early = Self.ecg.samples(1_000..<1_100, from: &cursor)
    #expect(early == Self.ecg.samples(1_000..<1_100))
    // A range that starts inside the cursor's beat needs the beat before it too.
    var late = SyntheticECG.BeatCursor.start
    _ = Self.ecg.samples(0..<5_000, from: &late)
    let again = Self.ecg.samples(4_990..<5_100, from: &late)
    #expect(again == Self.ecg.samples(4_990..<5_100))
  }
}
