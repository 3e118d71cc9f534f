/// What a scenario run did and whether its expectations held.
public struct ScenarioReport: Sendable {
  /// One expectation's outcome.
  public struct Result: Sendable {
    public var expectation: Expectation
    public var passed: Bool
    /// What was observed, in words ("1002 samples at 100.1/s").
    public var observed: String
    /// What was expected, in words.
    public var expected: String
    /// Why it was not checked, when it was not: a run cut short by a window
    /// (`doppel e2e --window`) cannot be held to a whole run's counts. Such a
    /// result is neither a pass nor a failure; reports show it as SKIP.
    public var notChecked: String? = nil
    /// The count in it was left out (by a window), whether or not the rest was checked.
    public var countNotChecked = false

    /// Not a failure: it held, or it was not checked.
    public var held: Bool { passed || notChecked != nil }
    /// "PASS", "FAIL" or "SKIP".
    public var verdict: String { notChecked != nil ? "SKIP" : passed ? "PASS" : "FAIL" }
  }

  public var scenario: String
  public var file: String
  /// Run time on the run's clock (virtual in loopback).
  public var elapsed: Duration
  /// Wall time the run took.
  public var wallTime: Duration
  /// What each device's client observed (end-to-end runs), by device id.
  public var observations: [String: DeviceObservations]
  /// What each device saw its centrals do, by device id.
  public var activity: [String: CentralActivity]
  /// Faults applied per device: (dropped, corrupted, rejected writes).
  public var faults: [String: (dropped: Int, corrupted: Int, rejectedWrites: Int)]
  public var results: [Result]
  /// Timeline events that fired, in order, as "time device action".
  public var firedEvents: [String]
  /// The same events, for plotting on the run's time axis.
  public var timeline: [FiredEvent] = []

  /// A timeline event that fired: when (seconds from the start), on which device, what.
  public struct FiredEvent: Sendable, Hashable {
    public var time: Double
    public var device: String?
    public var action: String
  }

  /// When the run was cut short by a window (`doppel e2e --window`), its length.
  public var window: Duration? = nil

  /// No expectation failed (some may not have been checked: see `window`).
  public var passed: Bool { results.allSatisfy(\.held) }
  /// The expectations that were not checked.
  public var notChecked: Int { results.filter { $0.notChecked != nil }.count }
  /// The counts a window left out, in checked and unchecked expectations alike.
  public var countsNotChecked: Int { results.filter(\.countNotChecked).count }
}
