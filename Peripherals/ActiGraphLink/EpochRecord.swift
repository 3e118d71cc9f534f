import GATT

/// One 60 s epoch in the device's log (the EPOCH4 fields: counts per axis,
/// steps, heart rate, wear).
public struct EpochRecord: Hashable, Sendable {
  /// Unix time of the epoch's start.
  public var timestamp: UInt32
  public var xCounts: UInt16
  public var yCounts: UInt16
  public var zCounts: UInt16
  public var steps: UInt8
  /// Beats per minute; 0 when not measured.
  public var heartRate: UInt8
  /// 0 not worn, 1 worn, 2 calibrating, 3 on USB.
  public var wearDetect: UInt8

  public init(
    timestamp: UInt32, xCounts: UInt16, yCounts: UInt16, zCounts: UInt16, steps: UInt8, heartRate: UInt8,
    wearDetect: UInt8
  ) {
    self.timestamp = timestamp
    self.xCounts = xCounts
    self.yCounts = yCounts
    self.zCounts = zCounts
    self.steps = steps
    self.heartRate = heartRate
    self.wearDetect = wearDetect
  }

  /// Bytes per record on the wire (the timestamp is implied by its index).
  public static let wireLength = 9

  /// x, y, z (u16 LE), steps, heart rate, wear.
  public var wireBytes: [UInt8] {
    var bytes = ByteWriter(capacity: Self.wireLength)
    bytes.append(xCounts)
    bytes.append(yCounts)
    bytes.append(zCounts)
    bytes.append(contentsOf: [steps, heartRate, wearDetect])
    return bytes.bytes
  }
}
