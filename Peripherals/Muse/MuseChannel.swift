/// One of the headband's EEG electrodes, in the order of their
/// characteristics (`273e0003` … `273e0007`).
public enum MuseChannel: String, CaseIterable, Hashable, Sendable {
  case tp9, af7, af8, tp10, aux

  /// The channel's name in muse-lsl's recordings (`TP9`, …, `Right AUX`).
  public var recordingName: String {
    switch self {
    case .tp9: "TP9"
    case .af7: "AF7"
    case .af8: "AF8"
    case .tp10: "TP10"
    case .aux: "Right AUX"
    }
  }

  /// 0…4 in characteristic order.
  public var index: Int {
    switch self {
    case .tp9: 0
    case .af7: 1
    case .af8: 2
    case .tp10: 3
    case .aux: 4
    }
  }

  /// The order the headband sends one packet index's channels in (muse-lsl
  /// waits for AF7, sent last): AUX, TP10, AF8, TP9, AF7.
  public static let sendingOrder: [MuseChannel] = [.aux, .tp10, .af8, .tp9, .af7]

  /// Whether the electrode sits on the forehead (blinks show there).
  public var isFrontal: Bool { self == .af7 || self == .af8 }
  /// Whether the electrode sits behind the ear (jaw muscle shows there).
  public var isTemporal: Bool { self == .tp9 || self == .tp10 }
}
