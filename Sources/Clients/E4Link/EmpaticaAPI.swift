import Foundation
import GATT
import Synchronization

/// The SDK's `EmpaticaAPI`: API-key authentication, discovery of E4
/// wristbands over a `CentralLink`, and the app's background and foreground
/// changes.
///
/// The SDK's class methods act on `shared`, which an app sets once to an
/// instance on its central (until then Bluetooth is not available):
///
/// ```swift
/// EmpaticaAPI.shared = EmpaticaAPI(link: central)
/// EmpaticaAPI.authenticate(withAPIKey: "KEY") { success, description in … }
/// try await EmpaticaAPI.discoverDevices(with: delegate)  // didDiscoverDevices: after the scan
/// // in the delegate: await devices[0].connect(with: deviceDelegate)
/// ```
///
/// Discovery is also a stream (`discoverDevices(duration:namePrefix:)`).
public actor EmpaticaAPI {
  let link: any CentralLink
  let authenticator: any E4Authenticator
  let clock: any Clock<Duration>
  let unixTime: @Sendable () -> Double

  /// How long `discoverDevices(with:)` scans.
  public nonisolated let scanDuration: Duration
  /// In the background, how often wristbands hand over the values they hold.
  public nonisolated let backgroundDeliveryInterval: Duration

  /// Whether the last authentication succeeded.
  public private(set) var isAuthenticated = false
  /// The BLE manager's status, told to the `EmpaticaDelegate` at every change.
  public private(set) var bleStatus: BLEStatus
  /// Whether the app said it is in the background (`prepareForBackground`).
  public private(set) var isInBackground = false

  private var empaticaDelegate: (any EmpaticaDelegate)?
  private var managers: [PeripheralID: E4DeviceManager] = [:]
  private var statusSinks = Broadcast<BLEStatus>()

  /// - Parameters:
  ///   - link: the central to scan and connect with.
  ///   - authenticator: decides API keys (the real SDK asks Empatica's server).
  ///   - clock: times scans and background delivery.
  ///   - bluetoothAvailable: `false` makes the status `notAvailable` (Bluetooth off).
  ///   - scanDuration: how long `discoverDevices(with:)` scans.
  ///   - backgroundDeliveryInterval: in the background, how often values are handed over.
  ///   - unixTime: the wall clock (seconds since 1970) sent to wristbands
  ///     in the start command; in virtual time, derive it from the clock.
  public init(
    link: any CentralLink, authenticator: any E4Authenticator = E4LocalVerifier.acceptingAnyKey,
    clock: any Clock<Duration> = ContinuousClock(), bluetoothAvailable: Bool = true,
    scanDuration: Duration = .seconds(5), backgroundDeliveryInterval: Duration = .seconds(1),
    unixTime: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
  ) {
    self.link = link
    self.authenticator = authenticator
    self.clock = clock
    self.scanDuration = scanDuration
    self.backgroundDeliveryInterval = backgroundDeliveryInterval
    self.unixTime = unixTime
    bleStatus = bluetoothAvailable ? .ready : .notAvailable
  }

  // MARK: - The shared instance

  private static let sharedInstance = Mutex(
    EmpaticaAPI(link: NoCentral(), bluetoothAvailable: false))

  /// The SDK's `sharedInstance`, which the class methods act on. Set it to an
  /// instance on the app's central before using them; the initial one has
  /// no central and reports Bluetooth as not available.
  public static var shared: EmpaticaAPI {
    get { sharedInstance.withLock { $0 } }
    set { sharedInstance.withLock { $0 = newValue } }
  }

  /// `+authenticateWithAPIKey:completionHandler:` on `shared`: `handler`
  /// gets whether it succeeded and why not.
  public static func authenticate(
    withAPIKey key: String, completionHandler handler: @escaping @Sendable (Bool, String) -> Void
  ) {
    let api = shared
    Task {
      let result = await api.authenticate(apiKey: key)
      handler(result.success, result.description)
    }
  }

  /// `+authenticateWithAPIKey:completionHandler:` as Swift imports it for
  /// `await`: whether it succeeded and why not.
  public static func authenticate(withAPIKey key: String) async -> (Bool, String) {
    let result = await shared.authenticate(apiKey: key)
    return (result.success, result.description)
  }

  /// `+discoverDevicesWithDelegate:` on `shared`.
  public static func discoverDevices(with empaticaDelegate: any EmpaticaDelegate) async throws(E4LinkError) {
    try await shared.discoverDevices(with: empaticaDelegate)
  }

  /// `+prepareForBackground` on `shared`.
  public static func prepareForBackground() async { await shared.prepareForBackground() }

  /// `+prepareForResume` on `shared`.
  public static func prepareForResume() async { await shared.prepareForResume() }

  // MARK: - Authentication

  /// `authenticateWithAPIKey:completionHandler:`: must succeed before discovery.
  @discardableResult
  public func authenticate(apiKey: String) async -> E4AuthenticationResult {
    let result = await authenticator.verify(apiKey: apiKey)
    isAuthenticated = result.success
    return result
  }

  // MARK: - Bluetooth status

  /// Switches Bluetooth on or off, as the phone's settings would.
  public func setBluetoothAvailable(_ available: Bool) {
    set(available ? .ready : .notAvailable)
  }

  /// The BLE status now and at every change.
  public func bleStatusUpdates() -> AsyncStream<BLEStatus> {
    statusSinks.makeStream(initial: bleStatus)
  }

  // MARK: - Background

  /// `prepareForBackground`: every wristband found so far, and every one
  /// found later, holds its values and hands them over together once per
  /// `backgroundDeliveryInterval` (in order, with their own timestamps);
  /// status changes still come at once.
  public func prepareForBackground() async {
    isInBackground = true
    for manager in managers.values { await manager.deliverInBackground(every: backgroundDeliveryInterval) }
  }

  /// `prepareForResume`: every wristband hands over what it holds and goes
  /// back to handing over each value as it arrives.
  public func prepareForResume() async {
    isInBackground = false
    for manager in managers.values { await manager.deliverInBackground(every: nil) }
  }

  // MARK: - Discovery

  /// `discoverDevicesWithDelegate:`: scans for `scanDuration`. The delegate
  /// is told the status scanning when the scan starts (before this returns),
  /// then, after the scan, ready, then `didDiscoverDevices:` once with every
  /// wristband found (empty when none). It is told every later status change
  /// too. With Bluetooth not available it is told `notAvailable` and no scan
  /// runs.
  ///
  /// Throws `notAuthenticated` without a successful `authenticate(apiKey:)`,
  /// where the SDK raises an exception.
  public func discoverDevices(with empaticaDelegate: any EmpaticaDelegate) throws(E4LinkError) {
    guard isAuthenticated else { throw Self.unauthenticated }
    self.empaticaDelegate = empaticaDelegate
    guard bleStatus != .notAvailable else {
      empaticaDelegate.didUpdate(.notAvailable)
      return
    }
    set(.scanning)
    let duration = scanDuration
    Task(executorPreference: Task.currentExecutorPreference) {
      await self.scan(duration: duration, namePrefix: E4Profile.advertisedName) { _ in }
    }
  }

  /// Discovery as a stream: scans for wristbands for `duration`. The stream
  /// reports the status (scanning), each wristband as it is `found`, and at
  /// the end the status (ready) and, once, the whole list (possibly empty);
  /// then it finishes. With Bluetooth unavailable it reports `notAvailable`
  /// and finishes. The same wristband gets the same manager in every scan.
  /// Ending the stream early stops the scan.
  ///
  /// Throws `notAuthenticated` without a successful `authenticate(apiKey:)`,
  /// as the SDK raises an exception.
  public func discoverDevices(duration: Duration = .seconds(5), namePrefix: String = E4Profile.advertisedName)
    throws(E4LinkError) -> AsyncStream<E4DiscoveryEvent>
  {
    guard isAuthenticated else { throw Self.unauthenticated }
    let (stream, continuation) = AsyncStream<E4DiscoveryEvent>.makeStream()
    guard bleStatus != .notAvailable else {
      continuation.yield(.bleStatus(.notAvailable))
      continuation.finish()
      return stream
    }
    set(.scanning)
    continuation.yield(.bleStatus(.scanning))
    let task = Task(executorPreference: Task.currentExecutorPreference) {
      await self.scan(duration: duration, namePrefix: namePrefix) { continuation.yield($0) }
      continuation.finish()
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  private static let unauthenticated = E4LinkError(
    .notAuthenticated, "authenticate with a valid API key before discovering devices")

  /// Scans for `duration`, reporting each wristband found, then the status
  /// and the whole list, to `report` and the delegate.
  private func scan(
    duration: Duration, namePrefix: String, report: @escaping @Sendable (E4DiscoveryEvent) -> Void
  ) async {
    let link = self.link
    let clock = self.clock
    let filter = ScanFilter(namePrefix: namePrefix)
    // Whatever this scan found, in the order found, as one list.
    let all = await withTaskGroup(of: [E4DeviceManager]?.self) { group in
      group.addTask {
        var found: [E4DeviceManager] = []
        for await peripheral in link.scan(filter: filter) {
          let manager = await self.manager(for: peripheral)
          guard !found.contains(where: { $0 === manager }) else { continue }
          found.append(manager)
          report(.found(manager))
        }
        return found
      }
      group.addTask {
        try? await clock.sleep(for: duration)
        return nil
      }
      var all: [E4DeviceManager] = []
      var first = true
      while let result = await group.next() {
        if first { group.cancelAll() }
        first = false
        if let found = result { all = found }
      }
      return all
    }
    if bleStatus == .scanning { set(.ready) }
    report(.bleStatus(bleStatus))
    report(.devices(all))
    empaticaDelegate?.didDiscoverDevices(all)
  }

  private func manager(for peripheral: DiscoveredPeripheral) async -> E4DeviceManager {
    if let known = managers[peripheral.id] { return known }
    let manager = E4DeviceManager(peripheral: peripheral, link: link, clock: clock, unixTime: unixTime)
    managers[peripheral.id] = manager
    if isInBackground { await manager.deliverInBackground(every: backgroundDeliveryInterval) }
    return manager
  }

  private func set(_ new: BLEStatus) {
    guard new != bleStatus else { return }
    bleStatus = new
    empaticaDelegate?.didUpdate(new)
    statusSinks.yield(new)
  }
}

/// The central of an app that has not set `EmpaticaAPI.shared`: finds
/// nothing and connects to nothing.
private struct NoCentral: CentralLink {
  func scan(filter: ScanFilter) -> AsyncStream<DiscoveredPeripheral> {
    AsyncStream { $0.finish() }
  }

  func connect(_ peripheral: PeripheralID, timeout: Duration) async throws(GATTError) -> any CentralConnection {
    throw GATTError(.notFound, "no central: set EmpaticaAPI.shared to an instance on the app's central")
  }
}
