import Synchronization

/// The real-time clock `rtc_set` sets and `rtc_get` reads: a calendar date
/// and time that runs on the host clock, through scripts, idle time and
/// hibernation, for as long as the model exists. It starts at 2000-01-01
/// 00:00:00 (Doppel's choice: a clock whose battery was never set).
public final class RealTimeClock: Sendable {
  /// A calendar date and time, as `rtc_get` writes it (year, month 1–12,
  /// day 1–31, hour, minute, second).
  public struct DateTime: Hashable, Sendable {
    public var year, month, day, hour, minute, second: Int

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
      (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    /// Whether every field is in its calendar range (years 2000–2099, as a two-digit RTC holds).
    public var isValid: Bool {
      (2000...2099).contains(year) && (1...12).contains(month) && (1...Self.days(in: month, of: year)).contains(day)
        && (0...23).contains(hour) && (0...59).contains(minute) && (0...59).contains(second)
    }

    static func days(in month: Int, of year: Int) -> Int {
      switch month {
      case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
      case 4, 6, 9, 11: 30
      default: 31
      }
    }

    /// Seconds since 2000-01-01 00:00:00.
    var seconds: Int {
      var days = 0
      for y in 2000..<year { days += y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) ? 366 : 365 }
      for m in 1..<month { days += Self.days(in: m, of: year) }
      days += day - 1
      return ((days * 24 + hour) * 60 + minute) * 60 + second
    }

    init(seconds: Int) {
      var rest = max(0, seconds)
      let second = rest % 60
      rest /= 60
      let minute = rest % 60
      rest /= 60
      let hour = rest % 24
      var days = rest / 24
      var year = 2000
      while true {
        let length = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 366 : 365
        if days < length { break }
        days -= length
        year += 1
      }
      var month = 1
      while days >= Self.days(in: month, of: year) {
        days -= Self.days(in: month, of: year)
        month += 1
      }
      self.init(year: year, month: month, day: days + 1, hour: hour, minute: minute, second: second)
    }
  }

  private struct State {
    var secondsAtSet = 0.0
    var uptimeAtSet = 0.0
    var uptime: @Sendable () -> Double = { 0 }
  }

  private let state = Mutex(State())

  public init() {}

  /// Makes the clock run on `uptime` (seconds of the host clock), keeping its reading.
  func attach(uptime: @escaping @Sendable () -> Double) {
    state.withLock {
      let reading = $0.secondsAtSet + $0.uptime() - $0.uptimeAtSet
      $0.uptime = uptime
      $0.secondsAtSet = reading
      $0.uptimeAtSet = uptime()
    }
  }

  /// The date and time now.
  public var now: DateTime {
    state.withLock { DateTime(seconds: Int(($0.secondsAtSet + $0.uptime() - $0.uptimeAtSet).rounded(.down))) }
  }

  /// Sets the clock (`rtc_set`); an invalid date is ignored and `false` returned.
  @discardableResult
  public func set(_ date: DateTime) -> Bool {
    guard date.isValid else { return false }
    state.withLock {
      $0.secondsAtSet = Double(date.seconds)
      $0.uptimeAtSet = $0.uptime()
    }
    return true
  }
}
