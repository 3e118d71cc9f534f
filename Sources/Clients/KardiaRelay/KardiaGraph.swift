/// The app's graph buffer (`dataPoints` in its BTService): the last 15 values
/// the board sent, as the strings it sent, drawn as numbers.
public struct KardiaGraph: Hashable, Sendable {
  /// How many points the graph shows.
  public static let capacity = 15

  /// The latest values, oldest first, as the board sent them.
  public private(set) var points: [String] = []

  public init() {}

  /// Adds a value, dropping the oldest beyond `capacity`.
  public mutating func append(_ text: String) {
    points.append(text)
    if points.count > Self.capacity { points.removeFirst(points.count - Self.capacity) }
  }

  /// The points as the chart draws them: each string's leading decimal number
  /// (surrounding white space ignored), 0 for one that is not a number, as
  /// `NSString.doubleValue` reads it.
  public var values: [Double] {
    points.map { text in
      let trimmed = text.drop { $0.isWhitespace || $0 == "\0" }
      var longest = 0.0
      var end = trimmed.startIndex
      while end < trimmed.endIndex {
        end = trimmed.index(after: end)
        if let value = Double(trimmed[..<end]) { longest = value }
      }
      return longest
    }
  }
}
