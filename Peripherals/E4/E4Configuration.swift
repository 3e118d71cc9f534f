/// How an emulated E4 is set up: identity, clock, battery, and the on-device
/// interbeat-interval detection.
public struct E4Configuration: Hashable, Sendable {
  /// How fast the battery empties, as a fraction of a full charge per hour, by state.
  public struct BatteryDrain: Hashable, Sendable {
    /// While streaming to a central.
    public var streamingPerHour: Double
    /// While connected but not streaming.
    public var connectedPerHour: Double
    /// While advertising with no central connected.
    public var idlePerHour: Double

    public init(streamingPerHour: Double = 0.04, connectedPerHour: Double = 0.02, idlePerHour: Double = 0.005) {
      self.streamingPerHour = max(0, streamingPerHour)
      self.connectedPerHour = max(0, connectedPerHour)
      self.idlePerHour = max(0, idlePerHour)
    }

    /// No drain at all.
    public static let none = BatteryDrain(streamingPerHour: 0, connectedPerHour: 0, idlePerHour: 0)
  }

  /// The advertised local name (the real wristband advertises `Empatica E4`).
  public var name: String
  /// The serial number served by Device Information.
  public var serialNumber: String
  /// The device clock (Unix seconds) when hosting starts, until a start command sets it.
  public var clockTime: Double
  /// The battery level when hosting starts, 0…1.
  public var batteryLevel: Double
  public var batteryDrain: BatteryDrain
  /// Seconds of streaming before interbeat intervals are sent (the SDK documents about 20).
  public var ibiWarmUp: Double
  /// Motion that makes beats unreliable: the spread (max − min) of the
  /// acceleration magnitude around a beat interval, in g, above which the
  /// interval is not sent.
  public var motionThreshold: Double

  public init(
    name: String = "Empatica E4", serialNumber: String = "A00000", clockTime: Double = 1_600_000_000,
    batteryLevel: Double = 1, batteryDrain: BatteryDrain = BatteryDrain(), ibiWarmUp: Double = 20,
    motionThreshold: Double = 0.15
  ) {
    self.name = name
    self.serialNumber = serialNumber
    self.clockTime = clockTime
    self.batteryLevel = min(1, max(0, batteryLevel))
    self.batteryDrain = batteryDrain
    self.ibiWarmUp = max(0, ibiWarmUp)
    self.motionThreshold = max(0, motionThreshold)
  }
}
