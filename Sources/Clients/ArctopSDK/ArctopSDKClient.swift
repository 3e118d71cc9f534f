import GATT

/// The Arctop SDK's entry point, shaped like the iOS SDK's `ArctopSDKClient`:
/// initialise with an API key, register listeners, check the user, scan for
/// and connect a Muse headband, watch signal quality, run a prediction
/// session and finish it. Talks to the headband over a `CentralLink` and to
/// Arctop's service through ``ArctopPredictionService``.
///
/// Every second of EEG (256 samples from each of TP9, AF7, AF8 and TP10) is
/// one analysis window: its signal quality goes to the QA listeners, and
/// during a session its band powers go to the prediction service, whose
/// values come back through `onValueChanged(key:value:)`.
public actor ArctopSDKClient {
  private let link: any CentralLink
  private let clock: any Clock<Duration>
  private let service: ArctopPredictionService
  /// How long a call to the prediction service may take.
  public let serviceTimeout: Duration
  /// How long connecting to a headband may take.
  public let connectTimeout: Duration

  private var initialized = false
  private var sdkListeners: [any ArctopSdkListener] = []
  private var qaListeners: [any ArctopQAListener] = []
  private var uploadListeners: [any ArctopSessionUploadListener] = []
  private var rawListeners: [any ArctopRawDataListener] = []

  private var scanTask: Task<Void, Never>?
  /// Devices the scans found, by name, in the order found.
  private var devices: [(name: String, id: PeripheralID)] = []
  private var connectionTask: Task<Void, Never>?
  private var connection: (any CentralConnection)?
  private var disconnectRequested = false
  /// The connection's state, as last reported.
  public private(set) var connectionState = ConnectionState.unknown
  /// Why the last connection attempt ended in `connectionFailed` (the SDK's
  /// listeners get only the state): the link's or BlueZ's own error.
  public private(set) var connectionFailure: (any Error)?

  /// The connected headband's notifications, decoded as they arrive.
  private var feed: MuseFeed?
  private var headbandOn: Bool?
  private var session: (prediction: String, windows: Int)?
  private var predictionInFlight = false
  private var serviceFailing = false

  /// Notifications that could not be decoded.
  public var malformedPackets: Int { malformedBefore + (feed?.malformed ?? 0) }
  /// Those of the connections before this one.
  private var malformedBefore = 0
  /// Analysis windows whose prediction was skipped because the last one had not come back.
  public private(set) var skippedWindows = 0
  /// The last signal quality.
  public private(set) var signalQuality: SignalQuality?

  public init(
    link: any CentralLink, clock: any Clock<Duration>, service: ArctopPredictionService,
    serviceTimeout: Duration = .seconds(3), connectTimeout: Duration = .seconds(30)
  ) {
    self.link = link
    self.clock = clock
    self.service = service
    self.serviceTimeout = serviceTimeout
    self.connectTimeout = connectTimeout
  }

  // MARK: - Setup phase

  /// Checks the API key with Arctop's service; nothing else works until this succeeds.
  /// `bundle` is the app's bundle identifier (the iOS SDK takes a `Bundle`).
  public func initializeArctop(apiKey: String, bundle: String) async -> Result<Bool, any Error> {
    do {
      try await call { try await $0.validate(apiKey: apiKey) }
      initialized = true
      return .success(true)
    } catch {
      return .failure(error)
    }
  }

  /// Releases everything: scan, connection, session, listeners.
  public func deinitializeArctop() async {
    scanTask?.cancel()
    scanTask = nil
    if connection != nil { try? await disconnectSensorDevice() }
    initialized = false
    session = nil
    sdkListeners = []
    qaListeners = []
    uploadListeners = []
    rawListeners = []
    feed?.setListeners([])
  }

  public func registerListener(_ listener: any ArctopSdkListener) { sdkListeners.append(listener) }
  public func registerListener(_ listener: any ArctopQAListener) { qaListeners.append(listener) }
  public func registerListener(_ listener: any ArctopSessionUploadListener) { uploadListeners.append(listener) }
  public func registerListener(_ listener: any ArctopRawDataListener) {
    rawListeners.append(listener)
    feed?.setListeners(rawListeners)
  }

  // MARK: - The user

  public func isUserLoggedIn() async throws -> Bool {
    try requireInitialized()
    return try await call { try await $0.isLoggedIn() }
  }

  /// Logs the user in (the iOS SDK shows Arctop's login sheet; here the service just accepts).
  public func loginUser() async -> Result<Bool, any Error> {
    do {
      try requireInitialized()
      try await call { try await $0.logIn() }
      return .success(true)
    } catch {
      return .failure(error)
    }
  }

  public func checkUserCalibrationStatus() async -> Result<UserCalibrationStatus, any Error> {
    do {
      try requireInitialized()
      return .success(try await call { try await $0.calibrationStatus() })
    } catch {
      return .failure(error)
    }
  }

  // MARK: - The sensor device

  /// Scans for Muse headbands (service `FE8D`) until `terminateScanForDevices()`;
  /// each new one is reported with the whole list so far.
  public func scanForAvailableDevices() throws {
    try requireInitialized()
    scanTask?.cancel()
    let link = self.link
    scanTask = Task(executorPreference: Task.currentExecutorPreference) {
      for await peripheral in link.scan(filter: ScanFilter(serviceUUIDs: [MuseProfile.service])) {
        await self.found(peripheral)
      }
    }
  }

  public func terminateScanForDevices() throws {
    try requireInitialized()
    scanTask?.cancel()
    scanTask = nil
  }

  /// Connects the headband a scan reported as `deviceId` (its name), reporting
  /// `connecting`, then `connected` once it streams, or `connectionFailed`.
  public func connectSensorDevice(deviceId: String) throws {
    try requireInitialized()
    guard let device = devices.first(where: { $0.name == deviceId }) else {
      throw ArctopSDKError(.unknownDevice, "no scan has found '\(deviceId)'")
    }
    connectionTask?.cancel()
    disconnectRequested = false
    setState(.connecting)
    connectionTask = Task(executorPreference: Task.currentExecutorPreference) { await self.run(device.id) }
  }

  /// Disconnects the headband; the state becomes `disconnectedUponRequest`.
  public func disconnectSensorDevice() async throws {
    try requireInitialized()
    guard let connection else { throw ArctopSDKError(.notConnected, "no sensor device is connected") }
    disconnectRequested = true
    await connection.disconnect()
    await connectionTask?.value
  }

  // MARK: - Sessions

  /// Starts a prediction session (`ArctopSDKPredictions`) on the connected headband.
  public func startPredictionSession(_ predictionName: String) async -> Result<Bool, any Error> {
    do {
      try requireInitialized()
      guard ArctopSDKPredictions.all.contains(predictionName) else {
        throw ArctopSDKError(.unknownPrediction, "'\(predictionName)' is not a prediction")
      }
      guard connectionState == .connected else { throw ArctopSDKError(.notConnected, "connect a sensor device first") }
      guard session == nil else { throw ArctopSDKError(.sessionState, "a session is running") }
      try await call { try await $0.startSession(predictionName) }
      session = (predictionName, 0)
      serviceFailing = false
      for listener in sdkListeners { listener.onSessionStarted(predictionName: predictionName) }
      return .success(true)
    } catch {
      return .failure(error)
    }
  }

  /// Ends the session and uploads it; the upload listeners hear how that went.
  public func finishSession() async -> Result<Bool, any Error> {
    guard let finished = session else {
      return .failure(ArctopSDKError(.sessionState, "no session is running"))
    }
    session = nil
    for listener in sdkListeners { listener.onSessionFinished() }
    for listener in uploadListeners { listener.onUploadStart() }
    do {
      try await call { try await $0.upload(prediction: finished.prediction, windows: finished.windows) }
      for listener in uploadListeners {
        listener.onUploadProgress(1)
        listener.onUploadComplete()
      }
      return .success(true)
    } catch {
      for listener in uploadListeners { listener.onUploadFailure(error) }
      return .failure(error)
    }
  }

  /// Whether a session is running.
  public var isSessionRunning: Bool { session != nil }

  // MARK: - The link

  private func found(_ peripheral: DiscoveredPeripheral) {
    let name = peripheral.name ?? peripheral.id.description
    guard !devices.contains(where: { $0.name == name }) else { return }
    devices.append((name, peripheral.id))
    let list = devices.map(\.name)
    for listener in sdkListeners { listener.onDeviceListUpdated(museDeviceList: list) }
  }

  /// Connects, subscribes, starts streaming, and feeds what arrives until the link ends.
  private func run(_ id: PeripheralID) async {
    var connected = false
    connectionFailure = nil
    do {
      let connection = try await link.connect(id, timeout: connectTimeout)
      self.connection = connection
      var feeds: [(MuseFeed.Source, NotificationStream)] = [
        (.control, try await connection.notifications(of: MuseProfile.control))
      ]
      for (sensor, address) in MuseProfile.eeg.enumerated() {
        feeds.append((.eeg(sensor: sensor), try await connection.notifications(of: address)))
      }
      feeds.append((.acceleration, try await connection.notifications(of: MuseProfile.accelerometer)))
      feeds.append((.telemetry, try await connection.notifications(of: MuseProfile.telemetry)))
      // As muse-js starts a headband: halt, preset, status, resume.
      for command in ["h", "p21", "s", "d"] {
        try await connection.write(MuseWire.command(command), to: MuseProfile.control, type: .withResponse)
      }
      let feed = MuseFeed(listeners: rawListeners)
      self.feed = feed
      connected = true
      setState(.connected)
      // Each second of EEG is analysed here, in order, while the
      // notifications are decoded as they arrive; the last windows are
      // analysed after the link ends.
      let analysis = Task(executorPreference: Task.currentExecutorPreference) {
        for await window in feed.windows { await self.analyse(window) }
      }
      var failure: (any Error)?
      do {
        try await withThrowingTaskGroup(of: Void.self) { group in
          for (source, stream) in feeds {
            group.addTask { try await stream.receiveEach { feed.take($0, from: source) } }
          }
          // The first feed to end (the link went) ends them all.
          defer { group.cancelAll() }
          try await group.next()
        }
      } catch {
        failure = error
      }
      feed.finish()
      await analysis.value
      if let failure { throw failure }
    } catch {
      // Reported below through the state; kept for whoever asks why.
      if !connected {
        connectionFailure = error
        // A link that came up but could not be set up is not left up.
        await connection?.disconnect()
      }
    }
    connection = nil
    if let feed {
      malformedBefore += feed.malformed
      self.feed = nil
    }
    setState(connected ? (disconnectRequested ? .disconnectedUponRequest : .disconnected) : .connectionFailed)
  }

  /// One analysis window: QA to the QA listeners, and during a session, to the prediction service.
  private func analyse(_ window: MuseFeed.Window) {
    let windows = window.eeg
    let quality = SignalQuality(windows: windows)
    signalQuality = quality
    for listener in qaListeners { listener.onSignalQuality(quality: quality.qaString) }
    if quality.headbandOn != headbandOn {
      headbandOn = quality.headbandOn
      for listener in qaListeners { listener.onHeadbandStatusChange(headbandOn: quality.headbandOn) }
    }
    let powers = BandPowers.of(windows)
    for listener in rawListeners { listener.onBandPowers(powers) }
    let moving = Self.spread(window.motion) > 0.1
    let failure: QAFailureType =
      !quality.headbandOn
      ? .headbandOffHead : moving ? .motionTooHigh : quality.sensors.contains(.noisy) ? .eegFailure : .passed
    guard var running = session else { return }
    running.windows += 1
    session = running
    for listener in sdkListeners { listener.onQAStatus(passed: failure == .passed, type: failure) }
    guard !predictionInFlight else {
      skippedWindows += 1
      return
    }
    predictionInFlight = true
    let prediction = running.prediction
    Task(executorPreference: Task.currentExecutorPreference) {
      do {
        let values = try await self.call {
          try await $0.predict(powers, prediction: prediction, qaPassed: failure == .passed)
        }
        await self.predicted(values)
      } catch {
        await self.predictionFailed(
          error as? ArctopSDKError ?? ArctopSDKError(.serviceUnreachable, "\(error)"))
      }
    }
  }

  private func predicted(_ values: [String: Float]) {
    predictionInFlight = false
    serviceFailing = false
    guard session != nil else { return }
    for (key, value) in values.sorted(by: { $0.key < $1.key }) {
      for listener in sdkListeners { listener.onValueChanged(key: key, value: value) }
    }
  }

  /// Reports the first failure of an outage; the next window tries again.
  private func predictionFailed(_ error: ArctopSDKError) {
    predictionInFlight = false
    guard !serviceFailing else { return }
    serviceFailing = true
    for listener in sdkListeners { listener.onError(error) }
  }

  private static func spread(_ values: [Double]) -> Double {
    guard let low = values.min(), let high = values.max() else { return 0 }
    return high - low
  }

  private func setState(_ state: ConnectionState) {
    let previous = connectionState
    guard previous != state else { return }
    connectionState = state
    for listener in sdkListeners { listener.onConnectionChanged(previous: previous, current: state) }
  }

  private func requireInitialized() throws(ArctopSDKError) {
    guard initialized else { throw ArctopSDKError(.notInitialized, "call initializeArctop(apiKey:bundle:) first") }
  }

  /// Calls the service, giving up after `serviceTimeout`.
  private func call<T: Sendable>(_ work: @escaping @Sendable (ArctopPredictionService) async throws -> T)
    async throws(ArctopSDKError) -> T
  {
    let (service, clock, limit) = (self.service, self.clock, serviceTimeout)
    do {
      return try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await work(service) }
        group.addTask {
          try await clock.sleep(for: limit)
          throw ArctopSDKError(.serviceTimeout, "prediction service did not answer within \(limit)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
      }
    } catch let error as ArctopSDKError {
      throw error
    } catch {
      throw ArctopSDKError(.serviceTimeout, "prediction service call cancelled")
    }
  }
}
