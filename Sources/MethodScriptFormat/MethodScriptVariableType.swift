/// The two-letter type of a MethodSCRIPT variable, which says what a value in
/// a data package is (`da` applied potential, `ba` WE current, …) and its unit.
///
/// The codes, meanings and units follow `MSCRIPT_VAR_TYPES_LIST` in PalmSens'
/// `mscript.py` (PalmSens/MethodSCRIPT_Examples).
public struct MethodScriptVariableType: Hashable, Sendable, CustomStringConvertible {
  /// The two lowercase letters, e.g. `ba`.
  public let code: String

  /// A type from its two-letter code; `nil` unless it is two ASCII lowercase letters.
  public init?(code: String) {
    guard code.utf8.count == 2, code.utf8.allSatisfy({ (0x61...0x7A).contains($0) }) else { return nil }
    self.code = code
  }

  private init(known code: String) { self.code = code }

  /// What the value is, e.g. `WE current`; `unknown` for a code not in the table.
  public var name: String { Self.table[code]?.name ?? "unknown" }
  /// The SI unit, e.g. `A`, `V`, `Hz`, `Ω`; empty for dimensionless or unknown types.
  public var unit: String { Self.table[code]?.unit ?? "" }
  /// Whether the code is in PalmSens' table.
  public var isKnown: Bool { Self.table[code] != nil }
  /// Whether values of this type are currents (their metadata carries a current range).
  public var isCurrent: Bool { unit == "A" || unit == "Arms" }

  /// Which kind of range a value's `2XX` metadata names, as PalmSens' decoders
  /// read it: a current range for currents and for `cc` (Z real, which carries
  /// the current range of the impedance measurement), a potential range for
  /// potentials and for `cd` (Z imaginary); none for other types.
  public var rangeKind: RangeKind {
    if self == .zReal || isCurrent { return .current }
    if self == .zImaginary || unit == "V" || unit == "Vrms" { return .potential }
    return .none
  }

  /// What a `2XX` metadata field indexes.
  public enum RangeKind: Hashable, Sendable {
    case current, potential, none
  }

  public var description: String { code }

  public static let unknown = MethodScriptVariableType(known: "aa")
  public static let wePotential = MethodScriptVariableType(known: "ab")
  public static let weCurrent = MethodScriptVariableType(known: "ba")
  public static let phase = MethodScriptVariableType(known: "ca")
  public static let impedance = MethodScriptVariableType(known: "cb")
  public static let zReal = MethodScriptVariableType(known: "cc")
  public static let zImaginary = MethodScriptVariableType(known: "cd")
  public static let appliedPotential = MethodScriptVariableType(known: "da")
  public static let appliedCurrent = MethodScriptVariableType(known: "db")
  public static let appliedFrequency = MethodScriptVariableType(known: "dc")
  public static let appliedACAmplitude = MethodScriptVariableType(known: "dd")
  public static let time = MethodScriptVariableType(known: "eb")
  public static let miscGeneric1 = MethodScriptVariableType(known: "ja")

  /// Every known type, by code.
  public static var all: [MethodScriptVariableType] {
    table.keys.sorted().map { MethodScriptVariableType(known: $0) }
  }

  private static let table: [String: (name: String, unit: String)] = [
    "aa": ("unknown", ""),
    "ab": ("WE vs RE potential", "V"), "ac": ("CE vs GND potential", "V"), "ad": ("SE vs GND potential", "V"),
    "ae": ("RE vs GND potential", "V"), "af": ("WE vs GND potential", "V"), "ag": ("WE vs CE potential", "V"),
    "ah": ("S2 vs RE potential", "V"), "ai": ("SE vs S2 potential", "V"),
    "as": ("AIN0 potential", "V"), "at": ("AIN1 potential", "V"), "au": ("AIN2 potential", "V"),
    "av": ("AIN3 potential", "V"), "aw": ("AIN4 potential", "V"), "ax": ("AIN5 potential", "V"),
    "ay": ("AIN6 potential", "V"), "az": ("AIN7 potential", "V"),
    "ba": ("WE current", "A"), "bb": ("WE2 current", "A"),
    "ca": ("phase", "°"), "cb": ("impedance", "Ω"), "cc": ("Z real", "Ω"), "cd": ("Z imaginary", "Ω"),
    "ce": ("EIS E TDD", "V"), "cf": ("EIS I TDD", "A"), "cg": ("EIS sampling frequency", "Hz"),
    "ch": ("EIS E AC", "Vrms"), "ci": ("EIS E DC", "V"), "cj": ("EIS I AC", "Arms"), "ck": ("EIS I DC", "A"),
    "cl": ("Z real bipot", "Ω"), "cm": ("Z imaginary bipot", "Ω"), "cn": ("Z real S2 vs RE", "Ω"),
    "co": ("Z imaginary S2 vs RE", "Ω"), "cp": ("Z real SE vs S2", "Ω"), "cq": ("Z imaginary SE vs S2", "Ω"),
    "cr": ("EIS bipot I TDD", "A"), "cs": ("EIS S2 vs RE E TDD", "V"), "ct": ("EIS SE vs S2 E TDD", "V"),
    "cu": ("EIS bipot I AC", "Arms"), "cv": ("EIS bipot I DC", "A"), "cw": ("EIS S2 vs RE E AC", "Vrms"),
    "cx": ("EIS S2 vs RE E DC", "V"), "cy": ("EIS SE vs S2 E AC", "Vrms"), "cz": ("EIS SE vs S2 E DC", "V"),
    "da": ("applied potential", "V"), "db": ("applied current", "A"), "dc": ("applied frequency", "Hz"),
    "dd": ("applied AC amplitude", "Vrms"),
    "ea": ("channel", ""), "eb": ("time", "s"), "ec": ("pin mask", ""), "ed": ("temperature", "°C"),
    "ee": ("count", ""), "ef": ("board temperature", "°C"), "eg": ("time vs potential derivative", "s/V"),
    "ha": ("generic current 1", "A"), "hb": ("generic current 2", "A"), "hc": ("generic current 3", "A"),
    "hd": ("generic current 4", "A"),
    "ia": ("generic potential 1", "V"), "ib": ("generic potential 2", "V"), "ic": ("generic potential 3", "V"),
    "id": ("generic potential 4", "V"),
    "ja": ("misc. generic 1", ""), "jb": ("misc. generic 2", ""), "jc": ("misc. generic 3", ""),
    "jd": ("misc. generic 4", ""),
  ]
}
