import GATT

/// One session of a central with a peripheral, as `doppel import` reads it
/// from a capture and `doppel record` records it on a live link: what the
/// peripheral advertised, its database as a profile, what happened on the
/// link (each characteristic by its key in the profile), and how the link
/// ended. `ImportedScenario` writes it as the files that replay it.
struct PeripheralSession {
  /// What happened on the link.
  enum Event: Hashable, Sendable {
    /// The peripheral notified a value.
    case notification(key: String, value: [UInt8])
    /// The peripheral indicated a value.
    case indication(key: String, value: [UInt8])
    /// The central wrote a value; `answer` as `CapturedConnection.Event.write` has it.
    case write(key: String, value: [UInt8], withResponse: Bool, answer: UInt8?)
    /// The central subscribed to notifications (1), indications (2), or neither (0).
    case subscription(key: String, value: UInt16)
  }

  /// Where the session comes from: the scenario's first comment lines, its
  /// name (`imported Sensor-7`) and its description.
  var origin: [String]
  var name: String
  var description: String
  var advertisement: AdvertisementData
  var profile: ImportedProfile
  /// When the link was made, in microseconds on the session's clock (as every time here).
  var connectedAt: Int64
  /// In the order they happened.
  var events: [(time: Int64, event: Event)]
  /// When the link ended and why, as people read it (`0x08 (connection timeout (link lost))`, `link lost`).
  var disconnection: (time: Int64, reason: String)?
  /// When the session was last watched, if later than its last event (the end of a live recording).
  var watchedUntil: Int64?
  /// Whether the central's writes were seen: a capture shows them, a
  /// recording makes none. Only then is the writes file written.
  var seesWrites: Bool
}
