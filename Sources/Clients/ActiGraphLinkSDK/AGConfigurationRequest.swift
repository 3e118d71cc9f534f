import Foundation

/// A configuration JSON the SDK accepts, checked: every key known, every
/// value of the right type, dates in the SDK's format.
struct AGConfigurationRequest {
  struct Epoch {
    var startText: String
    var stopText: String
    var start: Int64
    var stop: Int64
  }

  var rawStream: Bool?
  var imuFlags: UInt8?
  var epoch: Epoch?

  static let imuKeys = ["accelerometer", "gyroscope", "magnetometer", "temperature"]

  /// The request, or the SDK's error: code 3 with the unrecognized (or
  /// ill-typed) keys in `extra`, code 8 for a date not in the format.
  static func parse(_ json: String) -> Result<AGConfigurationRequest, AGError> {
    guard let data = json.data(using: .utf8),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], !object.isEmpty
    else {
      return .failure(AGError(.unrecognizedConfiguration, extra: json))
    }
    var request = AGConfigurationRequest()
    var unknown: [String] = []
    var badDates: [String] = []
    for key in object.keys.sorted() {
      let value = object[key]
      switch key {
      case "raw":
        guard let fields = value as? [String: Any] else {
          unknown.append(key)
          continue
        }
        for (field, fieldValue) in fields.sorted(by: { $0.key < $1.key }) {
          if field == "stream", let stream = boolean(fieldValue) {
            request.rawStream = stream
          } else {
            unknown.append(field)
          }
        }
        if request.rawStream == nil, !fields.keys.contains("stream") { unknown.append("stream") }
      case "imu":
        guard let fields = value as? [String: Any] else {
          unknown.append(key)
          continue
        }
        var flags: UInt8 = 0
        for (field, fieldValue) in fields.sorted(by: { $0.key < $1.key }) {
          guard let bit = imuKeys.firstIndex(of: field), let on = boolean(fieldValue) else {
            unknown.append(field)
            continue
          }
          if on { flags |= 1 << UInt8(bit) }
        }
        request.imuFlags = flags
      case "epoch":
        guard let fields = value as? [String: Any] else {
          unknown.append(key)
          continue
        }
        for field in fields.keys.sorted() where field != "startDateTime" && field != "stopDateTime" {
          unknown.append(field)
        }
        let start = fields["startDateTime"] as? String
        let stop = fields["stopDateTime"] as? String
        let startTime = start.flatMap(AGDateTime.parse)
        let stopTime = stop.flatMap(AGDateTime.parse)
        if startTime == nil { badDates.append("startDateTime: \(start ?? "missing")") }
        if stopTime == nil { badDates.append("stopDateTime: \(stop ?? "missing")") }
        if let start, let stop, let startTime, let stopTime {
          request.epoch = Epoch(startText: start, stopText: stop, start: startTime, stop: stopTime)
        }
      default:
        unknown.append(key)
      }
    }
    if !unknown.isEmpty { return .failure(AGError(.unrecognizedConfiguration, extra: unknown.joined(separator: ", "))) }
    if !badDates.isEmpty { return .failure(AGError(.dateFormatError, extra: badDates.joined(separator: ", "))) }
    return .success(request)
  }

  /// A JSON boolean, or "enable"/"disable" (one SDK README's spelling).
  static func boolean(_ value: Any?) -> Bool? {
    if let flag = value as? Bool { return flag }
    switch value as? String {
    case "enable": return true
    case "disable": return false
    default: return nil
    }
  }
}
