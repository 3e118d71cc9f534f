/// A preset the headband accepts (`p21`, `p50`, …): which channels it streams.
///
/// Which presets exist and what each enables is this project's choice,
/// after what muse-js and muse-lsl send: `p20` adds the AUX channel, `p21`
/// is four EEG channels (the default), `p50` adds PPG on a Muse 2 or S.
public struct MusePreset: Hashable, Sendable {
  /// The preset's name without the `p` (`21`).
  public var number: String
  /// Whether the fifth EEG channel (AUX) streams.
  public var aux: Bool
  /// Whether PPG streams (only on a headband that has it).
  public var ppg: Bool

  public static let p20 = MusePreset(number: "20", aux: true, ppg: false)
  public static let p21 = MusePreset(number: "21", aux: false, ppg: false)
  public static let p22 = MusePreset(number: "22", aux: true, ppg: false)
  public static let p23 = MusePreset(number: "23", aux: false, ppg: false)
  public static let p50 = MusePreset(number: "50", aux: false, ppg: true)
  public static let p51 = MusePreset(number: "51", aux: true, ppg: true)
  public static let p60 = MusePreset(number: "60", aux: false, ppg: true)
  public static let p61 = MusePreset(number: "61", aux: true, ppg: true)

  /// Every preset the headband accepts.
  public static let all: [MusePreset] = [.p20, .p21, .p22, .p23, .p50, .p51, .p60, .p61]

  /// The preset a `p…` command names; `nil` for one not accepted.
  public static func named(_ command: String) -> MusePreset? {
    let number = command.hasPrefix("p") ? String(command.dropFirst()) : command
    return all.first { $0.number == number }
  }
}
