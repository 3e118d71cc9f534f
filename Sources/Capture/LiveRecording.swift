import GATT

/// What `LiveRecorder` recorded: the peripheral, the files that replay it,
/// and how the recording ended.
public struct LiveRecording: Sendable {
  /// How a recording ended.
  public enum Ending: Sendable, Hashable {
    /// It lasted the time asked for.
    case elapsed
    /// The link ended first (a timeline fault in the scenario).
    case linkEnded(DisconnectReason)
    /// It was stopped early (the recording task was cancelled).
    case interrupted
  }

  /// The peripheral as the scan saw it.
  public var peripheral: DiscoveredPeripheral
  /// The scenario, profile and recording, with notes and a summary.
  public var scenario: ImportedScenario
  /// How long notifications were recorded, from the first subscription.
  public var recorded: Duration
  public var ending: Ending
}
