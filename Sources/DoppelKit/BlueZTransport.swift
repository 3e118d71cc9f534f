import BlueZ
import DBus
import GATT
import Logging
import Scenario

/// Runs a scenario over BlueZ in wall time: each device hosted on its
/// adapter (default the first), each client on an adapter of its own that
/// hosts no device, the first free one after its device's (the emulated
/// controllers carry one LE link each well).
///
/// Given a pool of adapters, a run keeps to it: devices without an adapter
/// of their own go to the pool's first, clients to the others, and a device
/// placed outside the pool is an error. Runs with disjoint pools share one
/// bluetoothd without meeting (the lab runs scenarios side by side so).
public actor BlueZTransport: ScenarioTransport {
  public nonisolated let clock: any Clock<Duration> = ContinuousClock()
  private let bus: DBusBusAddress
  private var peripheralBus: DBusConnection?
  private var centralBuses: [DBusConnection] = []
  private var hosted: [String: String] = [:]
  private var hostedAddresses: [String: String] = [:]
  private var clientAdapters: [String: BluetoothAdapter] = [:]
  private let centralAdapters: [String]?
  private let pool: [String]?
  private let notificationSockets: Bool
  private let advertisingRefresh: Duration?
  private var hostedCount = 0
  private var peripherals: [BlueZPeripheral] = []
  /// What the centrals of this transport received (``centralLink(for:)``,
  /// ``central(on:)``): with the hosted devices' counts, whether everything
  /// sent has arrived.
  private let received = NotificationCounter()
  private static let log = Logger(label: "doppel.bluez")

  /// - Parameters:
  ///   - adapters: the adapters this run may use (hci names or addresses),
  ///     the first for devices placed nowhere; `nil` for every adapter.
  ///   - centralAdapters: adapters clients may use, in order; `nil`
  ///     takes every adapter (of the pool) that hosts no device.
  ///   - notificationSockets: whether devices offer BlueZ `AcquireNotify`
  ///     (see ``BlueZPeripheral``); `false` sends notifications as D-Bus signals.
  ///   - advertisingRefresh: how often an unconnected device registers its
  ///     advertisement anew (`nil`: never; see ``BlueZPeripheral/readvertiseInterval``).
  public init(
    bus: DBusBusAddress = .system, adapters: [String]? = nil, centralAdapters: [String]? = nil,
    notificationSockets: Bool = true, advertisingRefresh: Duration? = BlueZPeripheral.readvertiseInterval
  ) {
    self.bus = bus
    self.pool = adapters
    self.centralAdapters = centralAdapters
    self.notificationSockets = notificationSockets
    self.advertisingRefresh = advertisingRefresh
  }

  private static func matches(_ adapter: BluetoothAdapter, _ names: [String]) -> Bool {
    names.contains(adapter.name) || names.contains { $0.uppercased() == adapter.address.uppercased() }
  }

  private func connectBus() async throws -> DBusConnection {
    try await DBusConnection.connect(to: bus)
  }

  public func host(_ model: any PeripheralModel, device: DeviceSpec) async throws -> any HostedDevice {
    let bus: DBusConnection
    if let existing = peripheralBus {
      bus = existing
    } else {
      bus = try await connectBus()
      peripheralBus = bus
    }
    let adapter = try await BluetoothAdapter.find(device.adapter ?? pool?.first, on: bus)
    if let pool, !Self.matches(adapter, pool) {
      throw ScenarioError(
        .invalidValue, file: device.location.file, line: device.location.line,
        column: device.location.column,
        "'\(device.id)' is placed on \(adapter.name) (\(adapter.address)), outside this run's adapters "
          + pool.joined(separator: ", "),
        suggestion: "add \(adapter.name) to --adapters, or leave the device's 'adapter' out")
    }
    try await adapter.powerOn(on: bus)
    hostedCount += 1
    let peripheral = try await BlueZPeripheral.host(
      model, on: adapter, bus: bus, name: "scenario\(hostedCount)", notificationSockets: notificationSockets,
      advertisingRefresh: advertisingRefresh)
    hosted[device.id] = adapter.name
    hostedAddresses[device.id] = adapter.address
    peripherals.append(peripheral)
    return Hosted(peripheral: peripheral)
  }

  /// Until every hosted model has sent what was due by now
  /// (``PeripheralModel/catchUp()``; a Muse waits 15 s at most). A model that waits
  /// for bluetoothd to read before it sends more falls behind its timeline
  /// when bluetoothd is busy: in a loaded lab a Muse was 0.85 s behind at
  /// the end of a 16 s run, 220 EEG samples due and never sent.
  public func catchUp() async {
    for peripheral in peripherals {
      let clock = ContinuousClock()
      let took = await clock.measure { await peripheral.model.catchUp() }
      // A device far behind makes the end of a run late: say by how much.
      if took > .milliseconds(500) {
        Self.log.info(
          "a device caught up with its timeline",
          metadata: ["device": "\(peripheral.model.advertisement.localName ?? "?")", "took": "\(took)"])
      }
    }
  }

  /// First until bluetoothd has read what the hosted devices sent (their
  /// notification sockets; 5 s at most); then, when the clients are this
  /// transport's centrals, until they received as many notifications as the
  /// devices sent (``drainUntilEverythingSentArrived()``); then until the
  /// clients' reports stand still. A bluetoothd busy with other lanes held
  /// 1–4 s of a 256 Hz stream after its sockets were read, longer than the
  /// reports' quiet second.
  public func drain(reports: @escaping @Sendable () -> Int) async {
    let deadline = ContinuousClock.now + .seconds(5)
    for peripheral in peripherals {
      _ = await peripheral.allNotificationsTaken(by: deadline)
    }
    if !centralBuses.isEmpty {
      let (sent, arrived) = await drainUntilEverythingSentArrived()
      if arrived < sent {
        Self.log.info(
          "the clients received fewer notifications than the devices sent",
          metadata: ["sent": "\(sent)", "received": "\(arrived)"])
      }
    }
    await drainUntilReportsStandStill(reports)
  }

  /// Until the centrals received at least as many notifications as the
  /// hosted devices sent: ``waitUntilReceived(_:reach:stillFor:limit:)``.
  func drainUntilEverythingSentArrived() async -> (sent: Int, received: Int) {
    let received = received
    return await Self.waitUntilReceived(
      { received.value },
      reach: { [peripherals] in
        var sent = 0
        for peripheral in peripherals { sent += await peripheral.notificationsSent }
        return sent
      })
  }

  /// Polls every 50 ms until `received` reaches `sent`. Some notifications
  /// never arrive (those in flight when a link dropped, `Value` changes
  /// bluetoothd merged), so it also ends once `received` stood still for
  /// `stillFor`, and after `limit` at most. Returns the counts it ended with.
  static func waitUntilReceived(
    _ received: @Sendable () -> Int, reach sent: @Sendable () async -> Int,
    stillFor: Duration = .seconds(2), limit: Duration = .seconds(30)
  ) async -> (sent: Int, received: Int) {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    var last = received()
    var progress = clock.now
    while true {
      let target = await sent()
      let count = received()
      if count >= target || clock.now >= deadline { return (target, count) }
      if count != last { (last, progress) = (count, clock.now) }
      if clock.now - progress >= stillFor { return (target, count) }
      do { try await clock.sleep(for: .milliseconds(50)) } catch { return (target, count) }
    }
  }

  public func centralLink(for device: DeviceSpec) async throws -> any CentralLink {
    let bus = try await connectBus()
    centralBuses.append(bus)
    let all = try await BluetoothAdapter.all(on: bus)
    let hosting = Set(hosted.values)
    let taken = Set(clientAdapters.values.map(\.name))
    let candidates = all.filter { adapter in
      !hosting.contains(adapter.name) && !taken.contains(adapter.name)
        && (pool.map { Self.matches(adapter, $0) } ?? true)
        && (centralAdapters.map { Self.matches(adapter, $0) } ?? true)
    }.sorted { Self.index(of: $0.name) < Self.index(of: $1.name) }
    // The client sits next to its device: the first free adapter after the
    // one hosting it (hci0's device gets hci1, hci2's gets hci3), so a device
    // and its client stay on one virtual air when the lab has several.
    let hostIndex = hosted[device.id].map(Self.index(of:)) ?? -1
    guard let adapter = candidates.first(where: { Self.index(of: $0.name) > hostIndex }) ?? candidates.first else {
      throw ScenarioError(
        .invalidValue, file: "", line: 0, column: 0,
        "no free adapter for \(device.id)'s client: adapters \(all.map(\.name).joined(separator: ", ")), "
          + "hosting devices \(hosting.sorted().joined(separator: ", ")), taken by clients \(taken.sorted().joined(separator: ", "))"
          + (pool.map { "; this run may use \($0.joined(separator: ", "))" } ?? ""),
        suggestion: pool == nil
          ? "give the lab more adapters (ci/lab --adapters N)" : "give --adapters one more adapter")
    }
    // Taken before the next suspension, so clients starting at once get different adapters.
    clientAdapters[device.id] = adapter
    try await adapter.powerOn(on: bus)
    return BlueZCentral(adapter: adapter, bus: bus, received: received)
  }

  /// A central on `adapter` (an hci name or address; `nil`: the first
  /// adapter), powered on, with the adapter's name: for a command that
  /// records or watches one device, with no scenario around it.
  public func central(on adapter: String?) async throws -> (link: any CentralLink, adapter: String) {
    let bus = try await connectBus()
    centralBuses.append(bus)
    let found = try await BluetoothAdapter.find(adapter, on: bus)
    try await found.powerOn(on: bus)
    return (BlueZCentral(adapter: found, bus: bus, received: received), found.name)
  }

  /// The number in an adapter's name (`hci12` → 12), for ordering them as the kernel numbered them.
  static func index(of name: String) -> Int {
    Int(name.drop { !$0.isNumber }) ?? Int.max
  }

  /// The adapter hosting a device (its hci name).
  public func hostAdapter(for device: String) -> String? { hosted[device] }

  /// The address of the adapter hosting a device: the address centrals see it at.
  public func hostAdapterAddress(for device: String) -> String? { hostedAddresses[device] }

  /// The adapter a device's client was given.
  public func clientAdapter(for device: String) -> BluetoothAdapter? { clientAdapters[device] }

  public nonisolated func run(
    for duration: Duration?, granularity: Duration, ended: @escaping @Sendable () -> Bool
  ) async throws {
    let clock = ContinuousClock()
    let end = duration.map { clock.now.advanced(by: $0) }
    while !ended() {
      let step = end.map { min(granularity, clock.now.duration(to: $0)) } ?? granularity
      guard step > .zero else { return }
      try await clock.sleep(for: step)
    }
  }

  public func shutdown() async {
    for bus in centralBuses { await bus.close() }
    centralBuses = []
    await peripheralBus?.close()
    peripheralBus = nil
  }

  struct Hosted: HostedDevice {
    let peripheral: BlueZPeripheral

    func setAdvertising(_ advertising: Bool, advertisement: AdvertisementData?) async throws {
      try await peripheral.setAdvertising(advertising, data: advertisement)
    }

    func stop() async { await peripheral.stop() }
  }
}
