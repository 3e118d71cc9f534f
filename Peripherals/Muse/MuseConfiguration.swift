/// How an emulated Muse is set up: identity, hardware, battery, and the wearer.
public struct MuseConfiguration: Hashable, Sendable {
  /// Which headband: the 2016 model has no PPG; the Muse 2 and Muse S have it.
  public enum Variant: String, Hashable, Sendable, CaseIterable {
    case muse2016 = "muse-2016"
    case muse2 = "muse-2"
    case museS = "muse-s"

    /// Whether the headband has the PPG characteristics.
    public var hasPPG: Bool { self != .muse2016 }
  }

  /// The advertised name (real headbands advertise `Muse-` and four hex digits).
  public var name: String
  /// The serial number in the status answer.
  public var serialNumber: String
  public var variant: Variant
  /// The battery level when hosting starts, 0…1.
  public var batteryLevel: Double
  /// Battery used per hour while streaming, 0…1 (a quarter of it while only connected).
  public var batteryDrainPerHour: Double
  /// The preset in force until a central selects another.
  public var preset: MusePreset
  /// The wearer, as the synthetic EEG draws them.
  public var eeg: SyntheticEEG.Parameters

  public init(
    name: String = "Muse-1A2B", serialNumber: String = "1A2B-3C4D-5E6F", variant: Variant = .muse2,
    batteryLevel: Double = 1, batteryDrainPerHour: Double = 0.2, preset: MusePreset = .p21,
    eeg: SyntheticEEG.Parameters = SyntheticEEG.Parameters()
  ) {
    self.name = name
    self.serialNumber = serialNumber
    self.variant = variant
    self.batteryLevel = min(1, max(0, batteryLevel))
    self.batteryDrainPerHour = max(0, batteryDrainPerHour)
    self.preset = preset
    self.eeg = eeg
  }
}
