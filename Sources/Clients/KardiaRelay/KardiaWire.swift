import BlendMicroClient

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The Kardia app's Socket.IO events, their arguments and their times.
///
/// - `message` (app → server): `{"amplitude": "<the board's text>", "time": "<ISO 8601>"}`
/// - `/BLEDisconnect` (app → server), no arguments: the board disconnected.
/// - `node.js` (server → app): `{"heartRate": "<whole bpm>", "statusCode": "0"|"200"|"404", "time": "<ISO 8601>"}`
/// - `/error` (server → app, Doppel's): `{"error": "<what was wrong>", "event": "<its name>"}`
enum KardiaWire {
  static let sampleEvent = "message"
  static let disconnectEvent = "/BLEDisconnect"
  static let analysisEvent = "node.js"
  static let errorEvent = "/error"
  /// The heart rate sent before there is one: what the app shows when it has none.
  static let noHeartRate = "- -"

  /// An event's arguments that cannot be taken.
  struct Failure: Error, Hashable {
    var error: String
  }

  // MARK: Samples

  /// The `message` event for one sample: the amplitude as the board's text.
  static func sample(amplitude: String, time: Date) -> SocketIOPacket {
    .event(sampleEvent, .object(["amplitude": .string(amplitude), "time": .string(format(time))]))
  }

  /// Reads the arguments of a `message` event, or says what is wrong with them.
  static func parseSample(_ arguments: [JSONValue]) -> Result<(amplitude: Double, time: Date), Failure> {
    let expectation = "expected one object {\"amplitude\": \"0.8123\", \"time\": \"2025-06-15T15:06:40.120Z\"}"
    guard arguments.count == 1, case .object(let object) = arguments[0] else {
      let got = arguments.isEmpty ? "no arguments" : arguments.map(\.kind).joined(separator: ", ")
      return .failure(Failure(error: "\"message\" takes \(expectation), got \(got)"))
    }
    let missing = ["amplitude", "time"].filter { object[$0] == nil }.map { "\"\($0)\"" }
    guard missing.isEmpty else {
      let keys = missing.joined(separator: " and ")
      return .failure(Failure(error: "missing key\(missing.count > 1 ? "s" : "") \(keys): \(expectation)"))
    }
    let amplitude: Double
    switch object["amplitude"] {
    case .string(let text)?:
      // The board may end its text with a line end (the app sent it as it came).
      let isPadding = { (character: Character) in character.isWhitespace || character == "\0" }
      let trimmed = text.drop(while: isPadding).reversed().drop(while: isPadding).reversed()
      guard let value = Double(String(trimmed)), value.isFinite else {
        return .failure(Failure(error: "\"amplitude\" \(quoted(text)) is not a decimal number"))
      }
      amplitude = value
    case .number(let value)?:
      amplitude = value
    case let other?:
      return .failure(Failure(error: "\"amplitude\" must be the board's text (a string), got \(other.kind)"))
    case nil:
      return .failure(Failure(error: "missing key \"amplitude\""))
    }
    guard case .string(let timeText)? = object["time"] else {
      return .failure(Failure(error: "\"time\" must be an ISO 8601 string, got \(object["time"]?.kind ?? "nothing")"))
    }
    guard let time = parseTime(timeText) else {
      return .failure(
        Failure(
          error: "bad \"time\" \(quoted(timeText)): expected ISO 8601 with a time zone, e.g. 2025-06-15T15:06:40.120Z"))
    }
    return .success((amplitude, time))
  }

  // MARK: Replies

  /// The `node.js` event for an analysis of samples up to `time`.
  static func analysis(_ analysis: HeartRateAnalysis, time: Date) -> SocketIOPacket {
    let rate = analysis.heartRate.map { String(Int($0.rounded())) } ?? noHeartRate
    return .event(
      analysisEvent,
      .object([
        "heartRate": .string(rate), "statusCode": .string(KardiaStatusCode.code(for: analysis.status)),
        "time": .string(format(time)),
      ]))
  }

  /// The `/error` event for something refused.
  static func failure(_ message: String, event: String? = nil) -> SocketIOPacket {
    var object: [String: JSONValue] = ["error": .string(message)]
    if let event { object["event"] = .string(event) }
    return .event(errorEvent, .object(object))
  }

  /// Reads an event from the server.
  static func reply(_ packet: SocketIOPacket) -> KardiaReply {
    guard let (name, arguments) = try? packet.event() else { return .unreadable(packet.text) }
    switch (name, arguments.first) {
    case (errorEvent, .object(let object)?):
      guard case .string(let message)? = object["error"] else { return .unreadable(packet.text) }
      return .error(message)
    case (analysisEvent, .object(let object)?):
      // The app read both as strings (and would have failed on anything else).
      guard case .string(let code)? = object["statusCode"], case .string(let rate)? = object["heartRate"] else {
        return .unreadable(packet.text)
      }
      var time: Date?
      if case .string(let text)? = object["time"] {
        guard let parsed = parseTime(text) else { return .unreadable(packet.text) }
        time = parsed
      }
      return .analysis(KardiaAnalysis(statusCode: code, heartRateText: rate, time: time))
    default:
      return .unreadable(packet.text)
    }
  }

  // MARK: Times

  /// ISO 8601 in UTC with milliseconds (rounded, not truncated), e.g. `2025-06-15T15:06:40.120Z`,
  /// the app's format.
  static func format(_ date: Date) -> String {
    let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
    let seconds = (milliseconds / 1000).rounded(.down)
    let fraction = Int(milliseconds - seconds * 1000)
    let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())  // …T15:06:40Z
    let digits = String(fraction)
    return "\(whole.dropLast()).\(String(repeating: "0", count: 3 - digits.count))\(digits)Z"
  }

  /// ISO 8601 date and time with a time zone (`Z` or an offset), with or without fractional seconds.
  static func parseTime(_ text: String) -> Date? {
    if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
    return try? Date.ISO8601FormatStyle().parse(text)
  }

  private static func quoted(_ text: String) -> String {
    let shown = text.count > 40 ? text.prefix(40) + "…" : Substring(text)
    return "\"\(shown)\""
  }
}
