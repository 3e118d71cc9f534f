import ArctopSDK
import Foundation
import Scenario
import Synchronization

/// The Arctop SDK's listeners in a scenario run: reports EEG with times from
/// the packet indexes, the predictions as metrics, QA verdicts, headband
/// and session events, and service failures to the run's observer; and
/// passes connection states and device lists on to the binding's client loop.
final class MuseReporter: ArctopSdkListener, ArctopQAListener, ArctopSessionUploadListener, ArctopRawDataListener {
  private let observer: ClientObserver
  private let device: String
  /// Per connection: the run time of packet index 0, and the last index seen (for 16-bit wrap-around).
  private let timing = Mutex<(origin: Double?, last: Int)>((nil, 0))
  let states: AsyncStream<ConnectionState>
  private let stateInput: AsyncStream<ConnectionState>.Continuation
  private let devices = Mutex<[String]>([])
  /// Whoever waits for device lists now: a stream each (`withDeviceListUpdates(_:)`).
  private let deviceListeners = Mutex<(next: Int, all: [Int: AsyncStream<[String]>.Continuation])>((0, [:]))

  static let streams = ["tp9", "af7", "af8", "tp10"]

  init(observer: ClientObserver, device: String) {
    self.observer = observer
    self.device = device
    (states, stateInput) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
  }

  /// The devices the scans reported so far.
  var knownDevices: [String] { devices.withLock { $0 } }

  /// Runs `body` with the device lists the scans report from now until it
  /// returns: a stream for this wait alone, since a stream whose consumer is
  /// cancelled (a wait that timed out) ends for good, and the next attempt
  /// must still hear them.
  func withDeviceListUpdates<T>(_ body: (AsyncStream<[String]>) async throws -> T) async rethrows -> T {
    let (stream, continuation) = AsyncStream.makeStream(of: [String].self, bufferingPolicy: .bufferingNewest(1))
    let id = deviceListeners.withLock { listeners in
      listeners.next += 1
      listeners.all[listeners.next] = continuation
      return listeners.next
    }
    defer {
      _ = deviceListeners.withLock { $0.all.removeValue(forKey: id) }
      continuation.finish()
    }
    return try await body(stream)
  }

  func onDeviceListUpdated(museDeviceList: [String]) {
    devices.withLock { $0 = museDeviceList }
    observer.event("device-list", device: device, detail: museDeviceList.joined(separator: ", "))
    for listener in deviceListeners.withLock({ Array($0.all.values) }) { listener.yield(museDeviceList) }
  }

  func onConnectionChanged(previous: ConnectionState, current: ConnectionState) {
    if current == .connected { timing.withLock { $0 = (nil, 0) } }
    stateInput.yield(current)
  }

  func onValueChanged(key: String, value: Float) {
    observer.metric(key, Double(value), device: device)
    if key == ArctopSDKPredictions.focus || key == ArctopSDKPredictions.sleepDetection {
      observer.event("prediction", device: device)
    }
    if key == ArctopSDKPredictions.blink, value == 1 { observer.event("blink", device: device) }
  }

  func onQAStatus(passed: Bool, type: QAFailureType) {
    let name: String
    switch type {
    case .passed: name = "qa-passed"
    case .headbandOffHead: name = "qa-off-head"
    case .motionTooHigh: name = "qa-motion"
    case .eegFailure: name = "qa-eeg-failure"
    }
    observer.event(name, device: device)
  }

  func onSessionStarted(predictionName: String) {
    observer.event("session-started", device: device, detail: predictionName)
  }

  func onSessionFinished() { observer.event("session-finished", device: device) }

  func onError(_ error: ArctopSDKError) {
    observer.error("\(error.message) (\(error.code))", device: device)
  }

  func onSignalQuality(quality: String) {
    let good = quality.split(separator: ",").filter { $0.hasSuffix(":good") }.count
    observer.metric("good-sensors", Double(good), device: device)
  }

  func onHeadbandStatusChange(headbandOn: Bool) {
    observer.event(headbandOn ? "headband-on" : "headband-off", device: device)
  }

  func onUploadStart() {}
  func onUploadProgress(_ fraction: Float) {}
  func onUploadComplete() { observer.event("upload-complete", device: device) }
  func onUploadFailure(_ error: ArctopSDKError) {
    observer.event("upload-failed", device: device, detail: error.message)
  }

  /// Sample n of the connection is at its first packet's arrival + n / 256 s.
  func onEEG(sensor: Int, packetIndex: UInt16, microvolts: [Double]) {
    guard Self.streams.indices.contains(sensor) else { return }
    // The clock is read once per connection, for its first packet.
    let (first, origin) = timing.withLock { timing -> (Int, Double) in
      var index = Int(packetIndex)
      while index < timing.last - 32768 { index += 65536 }
      timing.last = max(timing.last, index)
      let origin = timing.origin ?? observer.now - Double(12 * index) / 256
      timing.origin = origin
      return (index * 12, origin)
    }
    observer.samples(
      microvolts, stream: Self.streams[sensor], device: device, start: origin + Double(first) / 256,
      interval: 1.0 / 256)
  }

  func onBandPowers(_ powers: BandPowers) {
    observer.metric("alpha", powers.relativeAlpha, device: device)
  }

  func onBattery(percent: Double) {
    observer.metric("battery", percent / 100, device: device)
  }
}
