/// How long each workload runs once warmed up: for a time, or for a number of round trips.
enum BenchBudget: Sendable, CustomStringConvertible {
  case seconds(Double)
  case count(Int)

  /// Whether a workload that has run for `elapsed` nanoseconds and done `done` round trips should stop.
  func isSpent(elapsed: UInt64, done: Int) -> Bool {
    switch self {
    case .seconds(let seconds): Double(elapsed) >= seconds * 1e9
    case .count(let count): done >= count
    }
  }

  var description: String {
    switch self {
    case .seconds(let seconds): "\(seconds) s"
    case .count(let count): "\(count) round trips"
    }
  }
}
