/// One entry of a scenario's timeline: what happens, to which device, when.
public struct TimelineEvent: Sendable {
  /// When an event fires.
  public enum Trigger: Hashable, Sendable {
    /// At a time from the start of the run.
    case at(Duration)
    /// After something the device sees happens (`connected`, `disconnected`,
    /// `subscribed`, to one characteristic when `characteristic` names it),
    /// plus a delay; `count` picks its n-th occurrence.
    case after(event: String, device: String, characteristic: String?, delay: Duration, count: Int)
  }

  public var trigger: Trigger
  /// The device it acts on; `nil` for `end`.
  public var device: String?
  public var action: ScenarioAction
  public var location: SourceLocation

  public init(trigger: Trigger, device: String?, action: ScenarioAction, location: SourceLocation) {
    self.trigger = trigger
    self.device = device
    self.action = action
    self.location = location
  }
}

/// What a timeline event does.
public enum ScenarioAction: Hashable, Sendable {
  /// Start advertising (again).
  case advertise
  /// Stop advertising; existing connections stay.
  case stopAdvertising
  /// Refuse (disconnect at once) or accept new connections.
  case acceptConnections(Bool)
  /// End every connection from the peripheral side.
  case disconnect
  /// Hold notifications for a while: delayed (`drop` false) or lost (`drop` true).
  case stall(Duration, drop: Bool)
  /// Lose the next `count` notifications.
  case drop(count: Int)
  /// Garble the next `count` notifications.
  case corrupt(count: Int)
  /// Answer reads and writes `by` late (zero restores prompt answers).
  case delayResponses(by: Duration)
  /// Refuse writes with an ATT error (`nil` accepts them again); `count` nil
  /// refuses until told otherwise.
  case rejectWrites(error: UInt8?, count: Int?)
  /// Change what a stream carries from now on.
  case setStream(String, SourceSpec)
  /// Change the advertised name.
  case rename(String)
  /// A model-specific action (`tag`, `battery`, …) with its checked arguments.
  case device(name: String, arguments: [String: SettingValue])
  /// End the run.
  case end
}
