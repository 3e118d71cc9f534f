/// What the wearer does, minute by minute, from which the device's epoch
/// log is generated: a cycle of (activity, minutes) segments.
public struct ActivityPattern: Hashable, Sendable {
  public enum Activity: String, Sendable, CaseIterable {
    case sleep, sedentary, walking, running
    case notWorn = "not-worn"
  }

  public var segments: [(activity: Activity, minutes: Int)]

  public static func == (lhs: ActivityPattern, rhs: ActivityPattern) -> Bool {
    lhs.segments.map(\.activity) == rhs.segments.map(\.activity)
      && lhs.segments.map(\.minutes) == rhs.segments.map(\.minutes)
  }

  public func hash(into hasher: inout Hasher) {
    for segment in segments {
      hasher.combine(segment.activity)
      hasher.combine(segment.minutes)
    }
  }

  public init(_ segments: [(activity: Activity, minutes: Int)]) {
    self.segments = segments.filter { $0.minutes > 0 }
    if self.segments.isEmpty { self.segments = [(.sedentary, 1)] }
  }

  /// A day: 7 h sleep, walking, a run, desk work, the band off for a shower, and so on.
  public static let day = ActivityPattern([
    (.sleep, 420), (.walking, 30), (.sedentary, 180), (.notWorn, 20), (.walking, 20), (.sedentary, 240),
    (.running, 40), (.walking, 30), (.sedentary, 300), (.notWorn, 40), (.sedentary, 120),
  ])

  /// Parses `sleep 7h, walking 30m, running 20m, not-worn 1h` (minutes or hours per segment).
  public init?(parsing text: String) {
    var segments: [(activity: Activity, minutes: Int)] = []
    for part in text.split(separator: ",") {
      let words = part.split(separator: " ")
      guard words.count == 2, let activity = Activity(rawValue: String(words[0])) else { return nil }
      let amount = String(words[1])
      let minutes: Int?
      if amount.hasSuffix("h") {
        minutes = Int(amount.dropLast()).map { $0 * 60 }
      } else if amount.hasSuffix("m") {
        minutes = Int(amount.dropLast())
      } else {
        minutes = nil
      }
      guard let minutes, minutes > 0 else { return nil }
      segments.append((activity, minutes))
    }
    guard !segments.isEmpty else { return nil }
    self.init(segments)
  }

  /// The activity of minute `index` of the cycle.
  public func activity(atMinute index: Int) -> Activity {
    let cycle = segments.reduce(0) { $0 + $1.minutes }
    var minute = ((index % cycle) + cycle) % cycle
    for segment in segments {
      if minute < segment.minutes { return segment.activity }
      minute -= segment.minutes
    }
    return segments[0].activity
  }

  /// The epoch starting at Unix time `timestamp`, minute `index` of the log,
  /// drawn deterministically from `seed`.
  public func epoch(index: Int, timestamp: UInt32, seed: UInt64) -> EpochRecord {
    var random = SplitMix(seed: seed &+ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15)
    let ranges: [ClosedRange<Int>]
    let wear: UInt8
    switch activity(atMinute: index) {
    case .sleep: (ranges, wear) = ([0...20, 0...30, 0...15, 0...0, 48...58], 1)
    case .sedentary: (ranges, wear) = ([10...200, 20...300, 10...150, 0...5, 60...80], 1)
    case .walking: (ranges, wear) = ([800...1800, 1500...3000, 600...1500, 90...120, 90...115], 1)
    case .running: (ranges, wear) = ([3000...6000, 4500...9000, 2500...5000, 150...180, 140...170], 1)
    case .notWorn: (ranges, wear) = ([0...0, 0...0, 0...0, 0...0, 0...0], 0)
    }
    var values: [Int] = []
    for range in ranges {
      values.append(range.lowerBound + Int(random.next() % UInt64(range.upperBound - range.lowerBound + 1)))
    }
    return EpochRecord(
      timestamp: timestamp, xCounts: UInt16(values[0]), yCounts: UInt16(values[1]), zCounts: UInt16(values[2]),
      steps: UInt8(values[3]), heartRate: UInt8(values[4]), wearDetect: wear)
  }
}

/// SplitMix64: a small, fast, deterministic generator.
struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
