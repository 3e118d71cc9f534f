import GATT

/// Where a scenario's devices are hosted and its clients connect: the
/// in-process loopback in virtual time, or BlueZ in wall time.
public protocol ScenarioTransport: Sendable {
  /// The clock the devices, clients and timeline run on.
  var clock: any Clock<Duration> { get }

  /// The task executor the whole run prefers (the loopback's own thread), or
  /// `nil` for the global concurrent executor.
  var executor: (any TaskExecutor)? { get }

  /// Hosts `model` as the scenario's `device` (its adapter placement, name)
  /// and starts advertising.
  func host(_ model: any PeripheralModel, device: DeviceSpec) async throws -> any HostedDevice

  /// A central link for `device`'s client (on BlueZ, an adapter other than the device's).
  func centralLink(for device: DeviceSpec) async throws -> any CentralLink

  /// Lets time pass until `duration` has passed from the start, or `ended` is
  /// true. A wall-clock transport sleeps, checking `ended` at least every
  /// `granularity`; a virtual one moves its clock and checks it after every
  /// instant, so that time stops at the instant the run ended.
  func run(for duration: Duration?, granularity: Duration, ended: @escaping @Sendable () -> Bool) async throws

  /// Releases what the transport holds (bus connections, the loopback air).
  func shutdown() async

  /// Runs `work`, which takes no scenario time but waits on something outside
  /// the run (a server starting on threads of its own). A virtual clock
  /// stands still meanwhile; a wall clock just runs on.
  func outsideRunTime<T: Sendable>(_ work: @Sendable () async throws -> T) async throws -> T

  /// When the run ended, before its devices fall silent: lets a device the
  /// stack held back send what was due by then
  /// (``PeripheralModel/catchUp()``). Over BlueZ a busy bluetoothd reads a
  /// device's notifications late, and a device that waits for it (the Muse
  /// orders its EEG sets so) is behind its own timeline; silenced at once,
  /// it would never send the last of what the run's time made due. In
  /// virtual time nothing is behind.
  func catchUp() async

  /// After the run ended and its devices fell silent: lets what they sent
  /// before reach the clients, until `reports` (the observer's count) has
  /// stood still for a moment. Over a real link values are still in flight
  /// then (bluetoothd, the controllers); without this, a loaded machine
  /// cuts the last second of every stream off its counts.
  func drain(reports: @escaping @Sendable () -> Int) async
}

extension ScenarioTransport {
  public var executor: (any TaskExecutor)? { nil }

  public func outsideRunTime<T: Sendable>(_ work: @Sendable () async throws -> T) async throws -> T {
    try await work()
  }

  /// Nothing held back: the devices are on time.
  public func catchUp() async {}

  /// On the wall clock: ``drainUntilReportsStandStill(_:)``.
  public func drain(reports: @escaping @Sendable () -> Int) async {
    await drainUntilReportsStandStill(reports)
  }

  /// Polls `reports` every 100 ms, done once a second passes with no new
  /// report, and after 5 s at most.
  public func drainUntilReportsStandStill(_ reports: @escaping @Sendable () -> Int) async {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(5)
    var last = reports()
    var quietSince = clock.now
    while clock.now < deadline, clock.now - quietSince < .seconds(1) {
      do { try await clock.sleep(for: .milliseconds(100)) } catch { return }
      let count = reports()
      if count != last { (last, quietSince) = (count, clock.now) }
    }
  }
}

/// A device being hosted by a transport.
public protocol HostedDevice: Sendable {
  /// Starts or stops advertising, optionally with new data.
  func setAdvertising(_ advertising: Bool, advertisement: AdvertisementData?) async throws
  /// Stops hosting: connections end, the model's `stop()` is called.
  func stop() async
}
