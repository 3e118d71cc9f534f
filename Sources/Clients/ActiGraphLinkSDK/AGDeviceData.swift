import Foundation

/// One acceleration sample in g.
public struct AGAcceleration: Hashable, Sendable {
  public var x: Double
  public var y: Double
  public var z: Double

  public init(x: Double, y: Double, z: Double) {
    self.x = x
    self.y = y
    self.z = z
  }
}

/// One 60 s epoch as the SDK reports it.
public struct AGEpoch: Hashable, Sendable {
  /// Unix seconds of the epoch's start.
  public var timestamp: Int64
  public var xCounts: Int
  public var yCounts: Int
  public var zCounts: Int
  public var steps: Int
  public var heartRate: Int
  public var wearDetect: Int

  public init(
    timestamp: Int64, xCounts: Int, yCounts: Int, zCounts: Int, steps: Int, heartRate: Int, wearDetect: Int
  ) {
    self.timestamp = timestamp
    self.xCounts = xCounts
    self.yCounts = yCounts
    self.zCounts = zCounts
    self.steps = steps
    self.heartRate = heartRate
    self.wearDetect = wearDetect
  }
}

/// The status of the connected device (our JSON: the SDK does not document its status).
public struct AGDeviceStatus: Hashable, Sendable {
  public var device: String
  /// Percent.
  public var battery: Int
  /// The device clock, Unix seconds.
  public var deviceTime: Int64
  /// First and last logged epochs, Unix seconds.
  public var epochStart: Int64
  public var epochStop: Int64
  public var epochCount: Int
  public var rawSampleRate: Int
  public var rawStreaming: Bool
}

/// The state of an epoch download.
public enum AGDownloadState: String, Sendable {
  case started, downloading, completed
}

/// What the SDK delivers, typed; `AGMessage.json` is the same as the SDK's JSON.
public enum AGDeviceData: Hashable, Sendable {
  /// `{"device": serial}`: found during a scan.
  case deviceFound(String)
  /// `{"devices": [serials]}`: the scan ended.
  case devices([String])
  case deviceConnected(String)
  case deviceDisconnected(String)
  /// `{"raw": {"stream": Bool}}`: a raw configuration was accepted.
  case rawConfigured(stream: Bool)
  /// `{"raw": {"device", "timestamp", "acceleration"}}`: a batch of raw
  /// samples; beside the JSON, the first sample's device time to the
  /// millisecond (Unix seconds) and the sample rate (Hz).
  case raw(device: String, timestamp: Int64, acceleration: [AGAcceleration], time: Double, rate: Int)
  /// `{"epochDownload": {"state", "progress"}}`.
  case epochDownload(state: AGDownloadState, progress: Int)
  /// `{"epoch": {"startdatetime", "stopdatetime", "epochData"}}`.
  case epochs(start: String, stop: String, records: [AGEpoch])
  /// `{"status": {...}}`, delivered as device status.
  case status(AGDeviceStatus)
  /// `{"error": {"code", "description", "extra"}}`.
  case error(AGError)

  /// The SDK's JSON object for this value.
  var jsonObject: [String: Any] {
    switch self {
    case .deviceFound(let serial): ["device": serial]
    case .devices(let serials): ["devices": serials]
    case .deviceConnected(let serial): ["deviceConnected": serial]
    case .deviceDisconnected(let serial): ["deviceDisconnected": serial]
    case .rawConfigured(let stream): ["raw": ["stream": stream]]
    case .raw(let device, let timestamp, let acceleration, _, _):
      [
        "raw": [
          "device": device, "timestamp": String(timestamp),
          "acceleration": acceleration.map { ["x": $0.x, "y": $0.y, "z": $0.z] },
        ] as [String: Any]
      ]
    case .epochDownload(let state, let progress): ["epochDownload": ["state": state.rawValue, "progress": progress]]
    case .epochs(let start, let stop, let records):
      [
        "epoch": [
          "startdatetime": start, "stopdatetime": stop,
          "epochData": records.map {
            [
              "timestamp": AGDateTime.format($0.timestamp), "xCounts": $0.xCounts, "yCounts": $0.yCounts,
              "zCounts": $0.zCounts, "steps": $0.steps, "heartRate": $0.heartRate, "wearDetect": $0.wearDetect,
            ] as [String: Any]
          },
        ] as [String: Any]
      ]
    case .status(let status):
      [
        "status": [
          "device": status.device, "battery": status.battery, "deviceTime": AGDateTime.format(status.deviceTime),
          "epochStartDateTime": AGDateTime.format(status.epochStart),
          "epochStopDateTime": AGDateTime.format(status.epochStop), "epochCount": status.epochCount,
          "rawSampleRate": status.rawSampleRate, "rawStreaming": status.rawStreaming,
        ] as [String: Any]
      ]
    case .error(let error):
      [
        "error": ["code": error.code.rawValue, "description": error.code.description, "extra": error.extra]
          as [String: Any]
      ]
    }
  }
}

/// One message from the SDK: its JSON string, as the SDK's delegate gets it,
/// and the typed value beside it.
public struct AGMessage: Sendable {
  public let value: AGDeviceData
  /// The JSON string the SDK delivers (made when asked for: a stream of raw
  /// batches read through `value` costs no JSON).
  public var json: String {
    let data = (try? JSONSerialization.data(withJSONObject: value.jsonObject, options: [.sortedKeys])) ?? Data()
    return String(decoding: data, as: UTF8.self)
  }
  /// Whether the SDK delivers it as device status (`onDeviceStatus`) rather than data.
  public var isStatus: Bool {
    if case .status = value { return true }
    return false
  }

  init(_ value: AGDeviceData) {
    self.value = value
  }
}
