/// One value from a wristband with its device-side time: seconds since
/// 1 January 1970 (GMT), as the SDK documents.
///
/// GSR in µS, BVP in BVP units, temperature in °C, IBI in seconds, battery 0…1.
public struct E4Sample: Hashable, Sendable {
  public var value: Double
  public var timestamp: Double

  public init(value: Double, timestamp: Double) {
    self.value = value
    self.timestamp = timestamp
  }
}
