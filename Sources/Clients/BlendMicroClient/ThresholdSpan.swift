/// The strongest sample of the last 2 s, from which the R-peak detector takes
/// its threshold: a queue of samples whose amplitudes decrease, so that each
/// sample enters and leaves it once (linear time).
struct ThresholdSpan {
  private var queue: [(sample: Int, amplitude: Double)] = []
  private var head = 0

  /// The amplitude of the strongest sample in the span.
  var strongest: Double { queue[head].amplitude }

  /// Adds `sample`, then lets go of those that have left the span;
  /// `seconds(from, to)` is the time between two samples.
  mutating func add(_ sample: Int, amplitude: Double, seconds: (_ from: Int, _ to: Int) -> Double) {
    while queue.count > head, queue[queue.count - 1].amplitude <= amplitude { queue.removeLast() }
    queue.append((sample, amplitude))
    while HeartRateAnalysis.leftThresholdSpan(seconds(queue[head].sample, sample)) { head += 1 }
    if head > 1024, head * 2 > queue.count {
      queue.removeFirst(head)
      head = 0
    }
  }
}
