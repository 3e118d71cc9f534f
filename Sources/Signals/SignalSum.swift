/// The sum of several signals (a sine with noise on top, a drift plus
/// responses). It ends when any of its terms ends.
public struct SignalSum: SignalSource {
  public var terms: [any SignalSource]

  public init(_ terms: [any SignalSource]) { self.terms = terms }

  public mutating func value(at time: Double) -> Double? {
    var sum = 0.0
    for index in terms.indices {
      guard let value = terms[index].value(at: time) else { return nil }
      sum += value
    }
    return sum
  }
}
