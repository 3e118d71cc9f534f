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

  /// The `message` event for one sample, the amplitude as the board's text,
  /// as the Engine.IO message that carries it: `42["message",{"amplitude":"…","time":"…"}]`.
  static func sample(amplitude: String, time: Date) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let frame = SampleFrameOut(amplitude: amplitude, time: format(time))
    // Encoding two strings cannot fail.
    return "42" + ((try? String(decoding: encoder.encode(frame), as: UTF8.self)) ?? "[]")
  }

  /// `["message", {"amplitude": …, "time": …}]`, written without building a `JSONValue`.
  private struct SampleFrameOut: Encodable {
    struct Arguments: Encodable {
      var amplitude: String
      var time: String
    }
    var amplitude: String
    var time: String

    func encode(to encoder: any Encoder) throws {
      var frame = encoder.unkeyedContainer()
      try frame.encode(KardiaWire.sampleEvent)
      try frame.encode(Arguments(amplitude: amplitude, time: time))
    }
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

  /// A `message` event frame (`["message",{"amplitude":…,"time":"…"}]`) read
  /// straight into its types: how the server reads the usual event without
  /// building a `JSONValue` for it. `nil` for anything else, which then goes
  /// the general way (and gets its error message there).
  static func quickSample(_ data: Substring) -> [JSONValue]? {
    guard data.hasPrefix(#"["message",{"#),
      let frame = try? JSONDecoder().decode(SampleFrame.self, from: Data(data.utf8))
    else { return nil }
    return [.object(["amplitude": frame.amplitude, "time": .string(frame.time)])]
  }

  /// `["message", {"amplitude": string or number, "time": string}]` and nothing more.
  private struct SampleFrame: Decodable {
    var amplitude: JSONValue
    var time: String

    private enum Keys: String, CodingKey {
      case amplitude, time
    }

    init(from decoder: any Decoder) throws {
      var frame = try decoder.unkeyedContainer()
      guard try frame.decode(String.self) == KardiaWire.sampleEvent else {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "another event"))
      }
      let arguments = try frame.nestedContainer(keyedBy: Keys.self)
      guard frame.isAtEnd, arguments.allKeys.count == 2 else {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "more than a sample"))
      }
      if let text = try? arguments.decode(String.self, forKey: .amplitude) {
        amplitude = .string(text)
      } else {
        amplitude = .number(try arguments.decode(Double.self, forKey: .amplitude))
      }
      time = try arguments.decode(String.self, forKey: .time)
    }
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

  /// A `node.js` event frame whose values are all strings, read straight into
  /// an analysis: how the relay reads the usual answer. `nil` for anything
  /// else, which then goes the general way.
  static func quickAnalysis(_ data: Substring) -> KardiaAnalysis? {
    guard data.hasPrefix(#"["node.js",{"#),
      let frame = try? JSONDecoder().decode(AnalysisFrame.self, from: Data(data.utf8)),
      let code = frame.values["statusCode"], let rate = frame.values["heartRate"]
    else { return nil }
    var time: Date?
    if let text = frame.values["time"] {
      guard let parsed = parseTime(text) else { return nil }
      time = parsed
    }
    return KardiaAnalysis(statusCode: code, heartRateText: rate, time: time)
  }

  /// `["node.js", {string: string, …}]` and nothing more.
  private struct AnalysisFrame: Decodable {
    var values: [String: String]

    init(from decoder: any Decoder) throws {
      var frame = try decoder.unkeyedContainer()
      guard try frame.decode(String.self) == KardiaWire.analysisEvent else {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "another event"))
      }
      values = try frame.decode([String: String].self)
      guard frame.isAtEnd else {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "more than an analysis"))
      }
    }
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
