/// A signal that holds one value.
public struct ConstantSignal: SignalSource, Hashable {
  public var value: Double

  public init(_ value: Double) { self.value = value }

  public func value(at time: Double) -> Double? { value }
}
