/// A `SyntheticECG` as a `SignalSource`: the value at a time is the ECG's
/// sample at that time (rounded to its sample rate), computed ten seconds at
/// a time.
public struct ECGSignal: SignalSource {
  public let ecg: SyntheticECG
  private var block: [Double] = []
  private var blockStart = 0
  private var beats = SyntheticECG.BeatCursor.start
  private static let blockSeconds = 10

  public init(_ ecg: SyntheticECG) { self.ecg = ecg }

  public mutating func value(at time: Double) -> Double? {
    let n = max(0, Int((time * ecg.sampleRate).rounded()))
    if n < blockStart || n >= blockStart + block.count {
      blockStart = n
      block = ecg.samples(n..<(n + max(1, Int(ecg.sampleRate) * Self.blockSeconds)), from: &beats)
    }
    return block[n - blockStart]
  }
}
