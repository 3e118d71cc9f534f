/// What an emulated ActiGraph Link is: identity, battery, clock, its
/// on-board epoch log, and raw streaming rate.
public struct ActiGraphLinkConfiguration: Hashable, Sendable {
  /// The serial number, advertised as the local name (`TAS` + 10 characters).
  public var serialNumber: String
  /// Battery level, 0…1.
  public var batteryLevel: Double
  /// The device clock (Unix seconds) when hosting starts.
  public var clockTime: Double
  /// Hours of 60 s epochs logged before the clock time.
  public var logHours: Double
  /// What the wearer did, cycled from midnight (UTC) of each day.
  public var activity: ActivityPattern
  /// Seed of the epoch values.
  public var seed: UInt64
  /// Raw acceleration rate in Hz: 30…100 in steps of 10.
  public var rawRate: Int
  /// How long the device takes to read one batch of epochs from flash.
  public var batchInterval: Duration
  /// The first download fails with a transfer error after this percent of its records.
  public var transferErrorAt: Int?
  /// Whether the device refuses every configuration from the start.
  public var refusesConfiguration: Bool
  /// Whether the device's SDK access is switched off from the start.
  public var sdkAccessDisabled: Bool

  public init(
    serialNumber: String = "TAS1A14758923", batteryLevel: Double = 0.9, clockTime: Double = 1_437_451_200,
    logHours: Double = 24, activity: ActivityPattern = .day, seed: UInt64 = 1, rawRate: Int = 30,
    batchInterval: Duration = .milliseconds(10), transferErrorAt: Int? = nil, refusesConfiguration: Bool = false,
    sdkAccessDisabled: Bool = false
  ) {
    self.sdkAccessDisabled = sdkAccessDisabled
    self.transferErrorAt = transferErrorAt.map { min(max($0, 0), 100) }
    self.refusesConfiguration = refusesConfiguration
    self.serialNumber = serialNumber
    self.batteryLevel = min(max(batteryLevel, 0), 1)
    self.clockTime = clockTime
    self.logHours = max(0, logHours)
    self.activity = activity
    self.seed = seed
    self.rawRate = min(max((rawRate + 5) / 10 * 10, 30), 100)
    self.batchInterval = batchInterval
  }
}
