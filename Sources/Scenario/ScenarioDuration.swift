import GATT

/// Durations as scenarios write them: `250ms`, `10s`, `1.5s`, `2m`, `1h`,
/// `1h30m`, `24h`.
public enum ScenarioDuration {
  private static let units: [(suffix: String, seconds: Double)] = [
    ("ms", 0.001), ("us", 0.000_001), ("h", 3600), ("m", 60), ("s", 1),
  ]

  /// Parses `text`; `nil` when it is not a duration.
  public static func parse(_ text: String) -> Duration? {
    var rest = Substring(text.trimmingSpaces)
    guard !rest.isEmpty else { return nil }
    var total = 0.0
    while !rest.isEmpty {
      let number = rest.prefix { $0.isNumber || $0 == "." }
      guard !number.isEmpty, let value = Double(number) else { return nil }
      rest = rest.dropFirst(number.count)
      guard let unit = units.first(where: { rest.hasPrefix($0.suffix) }) else { return nil }
      rest = rest.dropFirst(unit.suffix.count)
      total += value * unit.seconds
    }
    // Longer than Duration's nanoseconds can hold (about 292 years) is not a duration.
    guard total * 1e9 < Double(Int64.max) else { return nil }
    return .nanoseconds(Int64((total * 1e9).rounded()))
  }

  /// The shortest of the forms above that reads back as `duration`.
  public static func format(_ duration: Duration) -> String {
    let seconds = duration.seconds
    if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
    if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
    if seconds >= 1 || seconds == 0 {
      if seconds == seconds.rounded() { return "\(Int(seconds))s" }
      let millis = (seconds * 1000).rounded() / 1000
      return "\(millis)s"
    }
    let ms = seconds * 1000
    return ms == ms.rounded() ? "\(Int(ms))ms" : "\(ms)ms"
  }
}

extension String {
  var trimmingSpaces: String {
    String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
  }
}
