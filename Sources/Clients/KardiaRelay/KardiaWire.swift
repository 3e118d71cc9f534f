import BlendMicroClient

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The JSON messages between the Kardia app and its server, and their times.
///
/// - event (app → server): `{"amplitude": <number>, "time": "<ISO 8601>"}`
/// - analysis (server → app): `{"heartRate": <number or null>, "statusCode": <0|1|2>, "time": "<ISO 8601>"}`
/// - error (server → app): `{"error": "<what was wrong>"}`
enum KardiaWire {
  /// An event as it travels; both keys optional so that all missing ones can be named.
  struct Event: Codable {
    var amplitude: Double?
    var time: String?
  }

  /// An analysis as it travels; `heartRate` is written as `null` when there is none.
  struct Analysis: Codable {
    var heartRate: Double?
    var statusCode: Int
    var time: String?

    private enum CodingKeys: String, CodingKey {
      case heartRate, statusCode, time
    }

    init(heartRate: Double?, statusCode: Int, time: String?) {
      self.heartRate = heartRate
      self.statusCode = statusCode
      self.time = time
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      heartRate = try container.decodeIfPresent(Double.self, forKey: .heartRate)
      statusCode = try container.decode(Int.self, forKey: .statusCode)
      time = try container.decodeIfPresent(String.self, forKey: .time)
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(heartRate, forKey: .heartRate)  // `null` when nil, as the app expects the key
      try container.encode(statusCode, forKey: .statusCode)
      try container.encodeIfPresent(time, forKey: .time)
    }
  }

  /// An error reply.
  struct Failure: Codable, Error {
    var error: String
  }

  // MARK: Events

  /// The event for one sample.
  static func event(amplitude: Double, time: Date) -> String {
    encode(Event(amplitude: amplitude, time: format(time)))
  }

  /// Reads an event, or says what is wrong with it.
  static func parseEvent(_ text: String) -> Result<(amplitude: Double, time: Date), Failure> {
    let event: Event
    do {
      event = try JSONDecoder().decode(Event.self, from: Data(text.utf8))
    } catch let error as DecodingError {
      return .failure(Failure(error: describe(error)))
    } catch {
      return .failure(Failure(error: "not JSON: \(error)"))
    }
    let missing = [event.amplitude == nil ? "\"amplitude\"" : nil, event.time == nil ? "\"time\"" : nil]
      .compactMap { $0 }
    guard let amplitude = event.amplitude, let timeText = event.time else {
      let keys = missing.joined(separator: " and ")
      return .failure(Failure(error: "missing key\(missing.count > 1 ? "s" : "") \(keys)"))
    }
    guard let time = parseTime(timeText) else {
      return .failure(
        Failure(
          error: "bad \"time\" \(quoted(timeText)): expected ISO 8601 with a time zone, e.g. 2025-06-15T15:06:40.120Z"
        ))
    }
    return .success((amplitude, time))
  }

  private static func describe(_ error: DecodingError) -> String {
    let expectation = "expected a JSON object {\"amplitude\": number, \"time\": ISO 8601 string}"
    switch error {
    case .dataCorrupted(let context) where context.codingPath.isEmpty:
      return "not JSON: \(expectation)"
    case .typeMismatch(_, let context) where context.codingPath.isEmpty:
      return "not a JSON object: \(expectation)"
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
      let key = context.codingPath.map(\.stringValue).joined(separator: ".")
      switch key {
      case "amplitude": return "\"amplitude\" must be a number"
      case "time": return "\"time\" must be an ISO 8601 string"
      default: return "bad \"\(key)\": \(expectation)"
      }
    case .keyNotFound(let key, _):
      return "missing key \"\(key.stringValue)\""
    @unknown default:
      return "unreadable event: \(expectation)"
    }
  }

  // MARK: Replies

  /// The reply for an analysis of samples up to `time`.
  static func analysis(_ analysis: HeartRateAnalysis, time: Date) -> String {
    encode(Analysis(heartRate: analysis.heartRate, statusCode: analysis.status.rawValue, time: format(time)))
  }

  /// The reply for an event that was refused.
  static func failure(_ message: String) -> String {
    encode(Failure(error: message))
  }

  /// Reads a reply from the server.
  static func reply(_ text: String) -> KardiaReply {
    let data = Data(text.utf8)
    let decoder = JSONDecoder()
    if let failure = try? decoder.decode(Failure.self, from: data) {
      return .error(failure.error)
    }
    guard let wire = try? decoder.decode(Analysis.self, from: data),
      let status = HeartRateAnalysis.Status(rawValue: wire.statusCode)
    else { return .unreadable(text) }
    var time: Date?
    if let text = wire.time {
      guard let parsed = parseTime(text) else { return .unreadable(text) }
      time = parsed
    }
    return .analysis(KardiaAnalysis(heartRate: wire.heartRate, status: status, time: time))
  }

  // MARK: Times

  /// ISO 8601 in UTC with milliseconds (rounded, not truncated), e.g. `2025-06-15T15:06:40.120Z`.
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

  private static func encode(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    // Encoding these plain structs cannot fail.
    return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
  }

  private static func quoted(_ text: String) -> String {
    let shown = text.count > 40 ? text.prefix(40) + "…" : Substring(text)
    return "\"\(shown)\""
  }
}
