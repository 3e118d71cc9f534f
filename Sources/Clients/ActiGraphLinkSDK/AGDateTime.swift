/// The SDK's date-time format, `MM-dd-yyyy HH:mm:ss` (e.g. `07-21-2015 04:05:00`),
/// read and written in UTC.
public enum AGDateTime {
  /// Unix seconds for a date-time in the SDK's format; `nil` when it is not one.
  public static func parse(_ text: String) -> Int64? {
    let bytes = Array(text.utf8)
    guard bytes.count == 19, bytes[2] == UInt8(ascii: "-"), bytes[5] == UInt8(ascii: "-"),
      bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for i in range {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) else { return nil }
        value = value * 10 + Int(bytes[i] - UInt8(ascii: "0"))
      }
      return value
    }
    guard let month = number(0..<2), let day = number(3..<5), let year = number(6..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60,
      second < 60, year >= 1970
    else { return nil }
    return daysFromCivil(year, month, day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
  }

  /// A Unix time in the SDK's format.
  public static func format(_ unixTime: Int64) -> String {
    let days = unixTime >= 0 ? unixTime / 86_400 : (unixTime - 86_399) / 86_400
    let seconds = Int(unixTime - days * 86_400)
    let (year, month, day) = civil(fromDays: days)
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(two(month))-\(two(day))-\(year) \(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
  }

  static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date.
  static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let m = Int64(month)
    let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

  static func civil(fromDays days: Int64) -> (Int, Int, Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let day = doy - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    return (Int(year), Int(month), Int(day))
  }
}
