import GATT

/// Notification payloads recorded from a device, sent again at their
/// recorded times, once or looping.
public struct NotificationReplay: Sendable, Hashable {
  /// One recorded value: when, on which characteristic, and its bytes.
  public struct Entry: Sendable, Hashable {
    /// Time from the replay's anchor.
    public var time: Duration
    public var characteristic: CharacteristicAddress
    public var value: [UInt8]

    public init(time: Duration, characteristic: CharacteristicAddress, value: [UInt8]) {
      self.time = time
      self.characteristic = characteristic
      self.value = value
    }
  }

  /// The moment the recorded times count from.
  public enum Anchor: String, Sendable, Hashable, CaseIterable {
    /// The device starts being hosted.
    case hosting
    /// A central connects (again after each reconnection).
    case connected
    /// A central subscribes to the characteristic of the first entry.
    case subscribed
  }

  /// The entries, in time order.
  public var entries: [Entry]
  public var anchor: Anchor
  /// Whether it starts over after its last entry.
  public var loops: Bool

  /// `entries` sorted by time (stable for equal times).
  public init(entries: [Entry], anchor: Anchor, loops: Bool) {
    self.entries = entries.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
      .map(\.element)
    self.anchor = anchor
    self.loops = loops
  }

  /// The time one pass takes when looping: the last entry's time plus the
  /// interval before it (so the loop keeps the recording's rhythm); at least 1 ms.
  public var period: Duration {
    guard let last = entries.last?.time else { return .milliseconds(1) }
    let previous = entries.count > 1 ? entries[entries.count - 2].time : .zero
    return max(.milliseconds(1), last + (last - previous))
  }
}
