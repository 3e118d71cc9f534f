import ArctopSDK
import Synchronization

/// Every callback the SDK makes, in order, for tests to read.
final class ArctopListenerLog: ArctopSdkListener, ArctopQAListener, ArctopSessionUploadListener, ArctopRawDataListener {
  struct Log {
    var deviceLists: [[String]] = []
    var states: [(ConnectionState, ConnectionState)] = []
    var values: [(String, Float)] = []
    var qa: [QAFailureType] = []
    var quality: [String] = []
    var headband: [Bool] = []
    var sessions: [String] = []
    var errors: [ArctopSDKError] = []
    var uploads: [String] = []
    var eegPackets = 0
    var powers: [BandPowers] = []
    var battery: [Double] = []
  }

  let log = Mutex(Log())
  var current: Log { log.withLock { $0 } }

  func onDeviceListUpdated(museDeviceList: [String]) { log.withLock { $0.deviceLists.append(museDeviceList) } }
  func onConnectionChanged(previous: ConnectionState, current: ConnectionState) {
    log.withLock { $0.states.append((previous, current)) }
  }
  func onValueChanged(key: String, value: Float) { log.withLock { $0.values.append((key, value)) } }
  func onQAStatus(passed: Bool, type: QAFailureType) { log.withLock { $0.qa.append(type) } }
  func onSessionStarted(predictionName: String) { log.withLock { $0.sessions.append("started \(predictionName)") } }
  func onSessionFinished() { log.withLock { $0.sessions.append("finished") } }
  func onError(_ error: ArctopSDKError) { log.withLock { $0.errors.append(error) } }
  func onSignalQuality(quality: String) { log.withLock { $0.quality.append(quality) } }
  func onHeadbandStatusChange(headbandOn: Bool) { log.withLock { $0.headband.append(headbandOn) } }
  func onUploadStart() { log.withLock { $0.uploads.append("start") } }
  func onUploadProgress(_ fraction: Float) { log.withLock { $0.uploads.append("progress \(fraction)") } }
  func onUploadComplete() { log.withLock { $0.uploads.append("complete") } }
  func onUploadFailure(_ error: ArctopSDKError) { log.withLock { $0.uploads.append("failure \(error.code)") } }
  func onEEG(sensor: Int, packetIndex: UInt16, microvolts: [Double]) { log.withLock { $0.eegPackets += 1 } }
  func onBandPowers(_ powers: BandPowers) { log.withLock { $0.powers.append(powers) } }
  func onBattery(percent: Double) { log.withLock { $0.battery.append(percent) } }

  /// The values reported for `key`.
  func values(_ key: String) -> [Float] { current.values.filter { $0.0 == key }.map(\.1) }
}
