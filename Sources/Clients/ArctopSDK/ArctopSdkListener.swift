/// The SDK's callbacks to the app: devices found, the connection, values,
/// QA verdicts, and session events. Called on the SDK's own executor; keep
/// them short.
public protocol ArctopSdkListener: AnyObject, Sendable {
  func onDeviceListUpdated(museDeviceList: [String])
  func onConnectionChanged(previous: ConnectionState, current: ConnectionState)
  func onValueChanged(key: String, value: Float)
  func onQAStatus(passed: Bool, type: QAFailureType)
  /// A session started (`startPredictionSession` succeeded).
  func onSessionStarted(predictionName: String)
  /// A session finished (`finishSession` or a lost device ended it).
  func onSessionFinished()
  /// Something failed outside a call's own result (the prediction service
  /// during a session). This project's addition: the document has no error callback.
  func onError(_ error: ArctopSDKError)
}

extension ArctopSdkListener {
  public func onDeviceListUpdated(museDeviceList: [String]) {}
  public func onConnectionChanged(previous: ConnectionState, current: ConnectionState) {}
  public func onValueChanged(key: String, value: Float) {}
  public func onQAStatus(passed: Bool, type: QAFailureType) {}
  public func onSessionStarted(predictionName: String) {}
  public func onSessionFinished() {}
  public func onError(_ error: ArctopSDKError) {}
}

/// Signal quality from the sensor device, for the QA view.
public protocol ArctopQAListener: AnyObject, Sendable {
  /// Per-sensor quality, once a second (`SignalQuality.qaString`).
  func onSignalQuality(quality: String)
  func onHeadbandStatusChange(headbandOn: Bool)
}

/// A finished session's upload.
public protocol ArctopSessionUploadListener: AnyObject, Sendable {
  func onUploadStart()
  func onUploadProgress(_ fraction: Float)
  func onUploadComplete()
  func onUploadFailure(_ error: ArctopSDKError)
}

/// Raw EEG and band powers as the SDK computes them: this project's
/// addition, so tests and scenarios see what the predictions are made of.
/// `onEEG` and `onBattery` are called as each notification is decoded, on
/// the thread that delivers it (keep them short); `onBandPowers` on the
/// SDK's own executor.
public protocol ArctopRawDataListener: AnyObject, Sendable {
  /// One sensor's samples (µV) of one packet, with its packet index.
  func onEEG(sensor: Int, packetIndex: UInt16, microvolts: [Double])
  /// The band powers of the last analysis window.
  func onBandPowers(_ powers: BandPowers)
  /// The battery level (0…100) from the headband's telemetry.
  func onBattery(percent: Double)
}
