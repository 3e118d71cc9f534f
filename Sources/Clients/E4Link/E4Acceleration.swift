/// One acceleration sample: each axis in 1/64 g (−128…127 ≈ −2…+2 g, the
/// SDK's `char`), with its device-side time in seconds since 1970.
public struct E4Acceleration: Hashable, Sendable {
  /// Towards the USB slot.
  public var x: Int8
  /// Towards the shorter strap.
  public var y: Int8
  /// Towards the bottom of the case.
  public var z: Int8
  public var timestamp: Double

  public init(x: Int8, y: Int8, z: Int8, timestamp: Double) {
    self.x = x
    self.y = y
    self.z = z
    self.timestamp = timestamp
  }

  /// The axes in g.
  public var g: (x: Double, y: Double, z: Double) { (Double(x) / 64, Double(y) / 64, Double(z) / 64) }
}
