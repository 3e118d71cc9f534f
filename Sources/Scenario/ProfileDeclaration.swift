import GATT

/// A device declared by data, as a `generic` device's `profile:` says (in
/// the scenario, or in a profile file it names): its GATT database with
/// static values, its advertisement, recorded notifications to replay and
/// the answers to writes. Checked whole when the scenario is parsed,
/// recordings included.
public struct ProfileDeclaration: Sendable {
  /// Recorded notifications sent again at their times.
  public struct Replay: Sendable {
    /// One recorded value.
    public struct Entry: Sendable, Hashable {
      public var time: Duration
      public var characteristic: CharacteristicAddress
      public var value: [UInt8]
    }

    /// The recording's path as resolved (for messages).
    public var file: String
    /// What the times count from: `hosting`, `connected` or `subscribed`.
    public var anchor: String
    public var loops: Bool
    public var entries: [Entry]
  }

  /// How a write is answered: a write to `characteristic` that matches
  /// (`bytes` exactly, `pattern` over its lowercase hex, or anything when
  /// both are `nil`) gets `replies`, or the ATT error `error`.
  public struct Response: Sendable {
    /// A value sent in answer, `delay` after the write.
    public struct Reply: Sendable, Hashable {
      public var characteristic: CharacteristicAddress
      public var value: [UInt8]
      public var delay: Duration
    }

    public var characteristic: CharacteristicAddress
    public var bytes: [UInt8]?
    public var pattern: String?
    public var replies: [Reply]
    public var error: UInt8?
  }

  public var gatt: GATTProfile
  public var advertisement: AdvertisementData
  public var replays: [Replay]
  public var responses: [Response]
  /// The file the profile is written in (the scenario, or the profile file it names).
  public var file: String

  public init(
    gatt: GATTProfile, advertisement: AdvertisementData, replays: [Replay] = [], responses: [Response] = [],
    file: String
  ) {
    self.gatt = gatt
    self.advertisement = advertisement
    self.replays = replays
    self.responses = responses
    self.file = file
  }
}
