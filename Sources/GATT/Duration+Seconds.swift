extension Duration {
  /// The duration in seconds, as a `Double`.
  public var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) / 1e18
  }
}

extension Duration {
  /// The duration in whole nanoseconds (rounded down).
  public var nanoseconds: Int64 {
    let (seconds, attoseconds) = components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }
}
