import MethodScriptFormat

/// What a running script reports to the app, in order.
public enum MeasurementEvent: Hashable, Sendable {
  /// The device accepted the script (`e`).
  case scriptAccepted
  /// A measurement loop started (`Mxxxx`).
  case loopStarted(id: String)
  /// A scan of a multi-scan loop started (`Cxxxx`).
  case scanStarted(id: String)
  /// A data package: typed values (potential in V, current in A, frequency
  /// in Hz, Z′ and Z″ in Ω, …) with their status and current range.
  case package(MethodScriptPackage)
  /// A `P` line that did not decode (reported, not dropped).
  case malformedPackage(line: String, reason: String)
  /// The scan ended (`-`).
  case scanEnded
  /// The measurement loop ended (`*`).
  case loopEnded
  /// A nested loop started (`L`) or ended (`+`).
  case nestedLoopStarted, nestedLoopEnded
  /// The device acknowledged an abort (`Z`).
  case abortAcknowledged
  /// Any other line the script printed.
  case text(String)
}
