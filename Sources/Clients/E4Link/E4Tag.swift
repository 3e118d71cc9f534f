/// A button press on the wristband, at a device-side time in seconds since 1970.
public struct E4Tag: Hashable, Sendable {
  public var timestamp: Double

  public init(timestamp: Double) { self.timestamp = timestamp }
}
