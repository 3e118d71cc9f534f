import Foundation

/// CPU time of processes and of the whole machine, read from `/proc`, so a
/// benchmark can say where the CPU went over its measured window: each
/// process's share of one CPU, and how busy all CPUs were.
struct CPUTimes {
  /// Clock ticks (user + system) of each process that could be read, by name.
  var processes: [String: Int]
  /// Ticks of all CPUs: busy (everything but idle and iowait) and in all.
  var busy: Int
  var total: Int
  var at: ContinuousClock.Instant

  /// Reads the ticks of `processes` (name → pid; `self` for this process).
  static func now(of processes: [String: Int32]) -> CPUTimes {
    var ticks: [String: Int] = [:]
    for (name, pid) in processes {
      ticks[name] = processTicks(pid == 0 ? "self" : "\(pid)")
    }
    let (busy, total) = machineTicks() ?? (0, 0)
    return CPUTimes(processes: ticks, busy: busy, total: total, at: .now)
  }

  /// Each process's CPU between `self` and `later`, in % of one CPU (a
  /// process that could not be read both times is left out), and all CPUs'
  /// busy share in %.
  func shares(until later: CPUTimes) -> (processes: [String: Double], machineBusy: Double) {
    let elapsed = (later.at - at) / .seconds(1)
    let perSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    var shares: [String: Double] = [:]
    for (name, before) in processes {
      guard let after = later.processes[name], after >= before, elapsed > 0 else { continue }
      shares[name] = 100 * Double(after - before) / perSecond / elapsed
    }
    let total = later.total - self.total
    return (shares, total > 0 ? 100 * Double(later.busy - busy) / Double(total) : .nan)
  }

  /// utime + stime of `/proc/PID/stat` (fields 14 and 15, after the
  /// parenthesised command name, which may hold spaces).
  private static func processTicks(_ pid: String) -> Int? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the name: state is field 3, so utime (14) and stime (15) are 11 and 12 on.
    guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
    return user + system
  }

  /// The `cpu` line of `/proc/stat`: (busy, total) ticks.
  private static func machineTicks() -> (Int, Int)? {
    guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
      let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
    else { return nil }
    let values = line.split(separator: " ").dropFirst().compactMap { Int($0) }
    guard values.count >= 5 else { return nil }
    let total = values.reduce(0, +)
    let idle = values[3] + values[4]  // idle and iowait
    return (total - idle, total)
  }
}
