import Foundation
import GATT

/// The SDK's `EmpaticaAPI`: API-key authentication and discovery of E4
/// wristbands, over a `CentralLink`.
///
/// ```swift
/// let api = EmpaticaAPI(link: central, authenticator: E4LocalVerifier(validKeys: ["KEY"]))
/// let result = await api.authenticate(apiKey: "KEY")
/// for await event in try await api.discoverDevices(duration: .seconds(5)) {
///   if case .devices(let found) = event, let e4 = found.first { … }
/// }
/// ```
public actor EmpaticaAPI {
  let link: any CentralLink
  let authenticator: any E4Authenticator
  let clock: any Clock<Duration>
  let unixTime: @Sendable () -> Double

  /// Whether the last authentication succeeded.
  public private(set) var isAuthenticated = false
  public private(set) var bleStatus: BLEStatus
  /// Whether the app said it is in the background (`prepareForBackground`).
  public private(set) var isInBackground = false

  private var managers: [PeripheralID: E4DeviceManager] = [:]
  private var statusSinks = Broadcast<BLEStatus>()

  /// - Parameters:
  ///   - link: the central to scan and connect with.
  ///   - authenticator: decides API keys (the real SDK asks Empatica's server).
  ///   - clock: times scans.
  ///   - bluetoothAvailable: `false` makes the status `notAvailable` (Bluetooth off).
  ///   - unixTime: the wall clock (seconds since 1970) sent to wristbands
  ///     in the start command; in virtual time, derive it from the clock.
  public init(
    link: any CentralLink, authenticator: any E4Authenticator = E4LocalVerifier.acceptingAnyKey,
    clock: any Clock<Duration> = ContinuousClock(), bluetoothAvailable: Bool = true,
    unixTime: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
  ) {
    self.link = link
    self.authenticator = authenticator
    self.clock = clock
    self.unixTime = unixTime
    bleStatus = bluetoothAvailable ? .ready : .notAvailable
  }

  /// `authenticateWithAPIKey:completionHandler:`: must succeed before discovery.
  @discardableResult
  public func authenticate(apiKey: String) async -> E4AuthenticationResult {
    let result = await authenticator.verify(apiKey: apiKey)
    isAuthenticated = result.success
    return result
  }

  /// Switches Bluetooth on or off, as the phone's settings would.
  public func setBluetoothAvailable(_ available: Bool) {
    set(available ? .ready : .notAvailable)
  }

  /// The BLE status now and at every change.
  public func bleStatusUpdates() -> AsyncStream<BLEStatus> {
    statusSinks.makeStream(initial: bleStatus)
  }

  /// `prepareForBackground`: recorded; the link keeps streaming.
  public func prepareForBackground() { isInBackground = true }
  /// `prepareForResume`.
  public func prepareForResume() { isInBackground = false }

  /// `discoverDevices(with:)`: scans for wristbands for `duration`. The
  /// stream reports the status (scanning), the devices found so far each
  /// time one is found, and at the end the status (ready) and the whole
  /// list (possibly empty); then it finishes. With Bluetooth unavailable it
  /// reports `notAvailable` and finishes. The same wristband gets the same
  /// manager in every scan.
  ///
  /// Throws `notAuthenticated` without a successful `authenticate(apiKey:)`,
  /// as the SDK raises an exception.
  public func discoverDevices(duration: Duration = .seconds(5), namePrefix: String = E4Profile.advertisedName)
    throws(E4LinkError) -> AsyncStream<E4DiscoveryEvent>
  {
    guard isAuthenticated else {
      throw E4LinkError(.notAuthenticated, "authenticate with a valid API key before discovering devices")
    }
    let (stream, continuation) = AsyncStream<E4DiscoveryEvent>.makeStream()
    guard bleStatus != .notAvailable else {
      continuation.yield(.bleStatus(.notAvailable))
      continuation.finish()
      return stream
    }
    set(.scanning)
    continuation.yield(.bleStatus(.scanning))
    let task = Task(executorPreference: Task.currentExecutorPreference) {
      await self.scan(duration: duration, namePrefix: namePrefix, continuation: continuation)
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  private func scan(
    duration: Duration, namePrefix: String, continuation: AsyncStream<E4DiscoveryEvent>.Continuation
  ) async {
    let link = self.link
    let clock = self.clock
    let filter = ScanFilter(namePrefix: namePrefix)
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        var found: [E4DeviceManager] = []
        for await peripheral in link.scan(filter: filter) {
          found.append(await self.manager(for: peripheral))
          continuation.yield(.devices(found))
        }
      }
      group.addTask { try? await clock.sleep(for: duration) }
      await group.next()
      group.cancelAll()
    }
    // Whatever the scan found, in the order found, as one list.
    let all = scanned
    scanned = []
    if bleStatus == .scanning { set(.ready) }
    continuation.yield(.bleStatus(bleStatus))
    continuation.yield(.devices(all))
    continuation.finish()
  }

  /// The managers found by the scan in progress.
  private var scanned: [E4DeviceManager] = []

  private func manager(for peripheral: DiscoveredPeripheral) -> E4DeviceManager {
    let manager =
      managers[peripheral.id] ?? E4DeviceManager(peripheral: peripheral, link: link, unixTime: unixTime)
    managers[peripheral.id] = manager
    if !scanned.contains(where: { $0 === manager }) { scanned.append(manager) }
    return manager
  }

  private func set(_ new: BLEStatus) {
    guard new != bleStatus else { return }
    bleStatus = new
    statusSinks.yield(new)
  }
}
