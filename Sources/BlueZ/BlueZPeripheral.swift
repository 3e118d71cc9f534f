import DBus
import GATT
import Glibc
import Logging
import Synchronization

/// Hosts one device model on one adapter through BlueZ: its profile as a GATT
/// application (`GattManager1.RegisterApplication`), its advertisement
/// (`LEAdvertisingManager1.RegisterAdvertisement`), and the model's callbacks
/// driven by BlueZ's calls, one at a time and in the order they arrived.
///
/// BlueZ's GATT server API does not say which central subscribed: a
/// `StartNotify` subscribes every connected central, `StopNotify` all of them.
///
/// Characteristics that notify offer BlueZ `AcquireNotify` (unless
/// `notificationSockets` is off): BlueZ then asks for a socket when a central
/// subscribes, and each notification is one packet on it instead of a D-Bus
/// signal. BlueZ closing the socket ends the subscription, as `StopNotify`
/// does. Without a socket, notifications change the `Value` property.
public actor BlueZPeripheral: PeripheralHost {
  /// What the model is told, in order.
  private enum Event: Sendable {
    case connected(CentralID)
    case disconnected(CentralID, DisconnectReason)
    case mtu(Int, CentralID)
    case subscription(CharacteristicAddress, CentralID, Bool)
    case read(CharacteristicAddress, offset: Int, CentralID, DBusMethodReply)
    case write(CharacteristicAddress, [UInt8], WriteType, CentralID, DBusMethodReply)
    case host(HostEvent)
  }

  public nonisolated let model: any PeripheralModel
  public nonisolated let adapter: BluetoothAdapter
  public nonisolated let clock: any Clock<Duration> = ContinuousClock()
  /// Whether notifying characteristics offer BlueZ `AcquireNotify`.
  public nonisolated let notificationSockets: Bool
  let bus: DBusConnection
  let objects: GATTApplicationObjects
  /// Whether the exported objects carry the profile's fixed handles (until
  /// bluetoothd refuses them once).
  private var fixedHandles = false
  private(set) var advertisement: LEAdvertisementObject
  /// Copies a refresh replaced while a link may have come from them, still
  /// registered: the kernel re-enables the advertising instance a link came
  /// from when the link ends, and with that instance gone it advertises the
  /// last data non-connectably from a random address instead (Linux 6.1,
  /// `hci_disconn_complete_evt`). Unregistered at the next refresh with no
  /// central connected, when advertising stops or takes new data, and at
  /// `stop()`.
  private var retired: [LEAdvertisementObject] = []
  /// Whether a refresh is under way, and until when a link that came up
  /// during it may still be reported.
  private var refreshing = false
  private var refreshSettles = ContinuousClock.now
  /// Centrals that connected during a refresh or just after: their link may
  /// have come from a copy the refresh unregistered, so the advertisement is
  /// refreshed the moment they leave.
  private var linkedDuringRefresh: Set<CentralID> = []
  /// Whether the advertisement is registered with BlueZ.
  public private(set) var isAdvertising = false
  /// Whether the advertisement should be on (`isAdvertising` is whether it is registered).
  private var wantsAdvertising = true
  /// The advertisement changes in progress, one after another.
  private var advertisingChange: Task<Void, any Error>?
  private var readvertiser: Task<Void, Never>?
  /// While no central is connected, the advertisement is registered anew
  /// this often. BlueZ's emulated controllers (btvirt) deliver an
  /// advertisement to a scanner only when advertising or scanning is switched
  /// on, and the kernel can drop that one report (docs/lab.md). The fresh
  /// copy goes on the air before the old one comes off
  /// (`refreshAdvertisement()`); a real radio repeats advertisements anyway,
  /// so this costs a real peripheral nothing.
  /// `host(…, advertisingRefresh:)` sets another interval, or none.
  public static let readvertiseInterval: Duration = .seconds(3)
  /// How often the advertisement is registered anew while no central is
  /// connected (`nil`: never).
  private let advertisingRefresh: Duration?
  private let events: AsyncStream<Event>.Continuation
  private var eventTask: Task<Void, Never>?
  private var deviceWatch: Task<Void, Never>?
  /// The unique name of `org.bluez`'s owner: only bluetoothd may drive the
  /// device (every other caller of its methods gets `AccessDenied`).
  private nonisolated let bluez = Mutex<String?>(nil)
  private var ownerWatch: Task<Void, Never>?
  /// Whether the application is registered with the bluetoothd now on the bus.
  private var registered = false
  /// Registering again with a bluetoothd that came back.
  private var registration: Task<Void, Never>?
  /// When the last bluetoothd went away.
  private var lostAt: ContinuousClock.Instant?
  /// How long to wait for a bluetoothd that came back to list the adapter as powered.
  public static let reregistrationTimeout: Duration = .seconds(30)

  /// The subscription calls (AcquireNotify, StartNotify, StopNotify), handled
  /// one after another in the order bluetoothd made them.
  private nonisolated let subscriptionCalls = Mutex<Task<Void, Never>?>(nil)

  private var connected: [CentralID] = []
  private var mtus: [CentralID: Int] = [:] { didSet { forgetSocketRoutes() } }
  private var subscribed: [CharacteristicAddress: [CentralID]] = [:] { didSet { forgetSocketRoutes() } }
  /// Centrals this device disconnected whose link bluetoothd has not taken
  /// down yet (it waits 2 s after Device1.Disconnect, its DISCONNECT_TIMER):
  /// not taken for connected again meanwhile, and no advertising refresh
  /// until they are gone. Bounded by the call's timeout (libdbus's 25 s).
  private var dropped: Set<CentralID> = []
  private var confirmations: [CharacteristicAddress: [CheckedContinuation<Void, Never>]] = [:]
  /// Whether ``notificationsTaken()`` last gave up waiting for bluetoothd
  /// (it warns once a stall).
  private var bluetoothdBehind = false
  /// The sockets BlueZ acquired, by characteristic, with their numbers.
  private var acquired: [CharacteristicAddress: [(number: Int, socket: NotificationSocket)]] = [:] {
    didSet { forgetSocketRoutes() }
  }
  private var socketsAcquired = 0
  /// What ``notifyAtOnce(_:characteristic:)`` needs to send a characteristic's
  /// value without the actor: its one notification socket and its
  /// subscribers' smallest MTU. Noted by a notification that went out on
  /// that socket, forgotten when a subscription, a socket or an MTU changes.
  private nonisolated let socketRoutes = Mutex<[CharacteristicAddress: SocketRoute]>([:])
  /// The notifications ``notifyAtOnce(_:characteristic:)`` sent.
  private nonisolated let sentAtOnce = Atomic<Int>(0)

  private struct SocketRoute: Sendable {
    let socket: NotificationSocket
    let mtu: Int
    let central: CentralID
    let definition: CharacteristicDefinition
  }

  /// Counts the changes that forgot the routes: a send that waited notes one only if none came meanwhile.
  private var routeChanges = 0

  private func forgetSocketRoutes() {
    routeChanges += 1
    socketRoutes.withLock { $0.removeAll() }
  }

  /// How many notification sockets BlueZ has acquired since hosting began.
  public var acquiredNotificationSockets: Int { socketsAcquired }
  private var isRunning = true

  /// Exports `model` on `adapter` under `/org/doppel/<adapter>/<name>` and
  /// starts advertising. `name` must be unique per adapter and bus connection.
  /// `notificationSockets: false` sends every notification as a D-Bus signal.
  /// `advertisingRefresh` is how often the advertisement is registered anew
  /// while no central is connected (``readvertiseInterval``; `nil`: never).
  public static func host(
    _ model: any PeripheralModel, on adapter: BluetoothAdapter, bus: DBusConnection, name: String,
    notificationSockets: Bool = true, advertisingRefresh: Duration? = readvertiseInterval
  ) async throws -> BlueZPeripheral {
    let root = try ObjectPath("/org/doppel").appending(adapter.name).appending(name)
    let peripheral = try BlueZPeripheral(
      model: model, adapter: adapter, bus: bus, root: root, notificationSockets: notificationSockets,
      advertisingRefresh: advertisingRefresh)
    try await peripheral.start()
    return peripheral
  }

  private init(
    model: any PeripheralModel, adapter: BluetoothAdapter, bus: DBusConnection, root: ObjectPath,
    notificationSockets: Bool, advertisingRefresh: Duration?
  ) throws {
    self.model = model
    self.advertisingRefresh = advertisingRefresh
    self.notificationSockets = notificationSockets
    self.adapter = adapter
    self.bus = bus
    self.objects = try GATTApplicationObjects(root: root, profile: model.profile)
    self.advertisement = LEAdvertisementObject(path: try root.appending("advertisement"), data: model.advertisement)
    (eventStream, events) = AsyncStream<Event>.makeStream()
  }

  private let eventStream: AsyncStream<Event>

  private func start() async throws {
    let stream = eventStream
    let model = self.model
    eventTask = Task { await Self.deliver(stream, to: model) }
    try await watchBlueZOwner()
    try await watchDevices()
    fixedHandles = objects.hasFixedHandles
    try await objects.export(on: bus) { address in self.methods(for: address) }
    do {
      try await advertisement.export(on: bus) { [weak self] call in
        guard self?.fromBlueZ(call, "Release") == true else { throw Self.accessDenied("Release") }
        return []
      }
      try await register(withAdvertisement: false)
      // The model starts before the device goes on the air: one that starts
      // switched off (a flat battery) turns its advertising off here, and is
      // never seen advertising.
      await model.start(host: self)
      try await serialized { try await self.applyAdvertising(self.wantsAdvertising, data: nil) }
      if isAdvertising {
        Logger.bluez.info(
          "advertising", metadata: ["device": "\(model.advertisement.localName ?? "?")", "adapter": "\(adapter)"])
      }
    } catch {
      Logger.bluez.error(
        "registering failed", metadata: ["device": "\(model.advertisement.localName ?? "?")", "error": "\(error)"])
      await stop()
      throw BlueZError.gattError(error, "hosting \(model.advertisement.localName ?? "a device") on \(adapter)")
    }
    readvertiser = Task { await self.readvertiseWhileIdle() }
  }

  /// Registers the application, and the advertisement when it should be on
  /// (and `withAdvertisement`), with the bluetoothd on the bus now.
  private func register(withAdvertisement: Bool = true) async throws {
    let manager = try DBusRemoteObject(connection: bus, destination: BlueZ.service, path: adapter.path)
    // The application may be registered already, when the advertisement failed before.
    if !registered {
      try await registerApplication(on: manager)
      registered = true
    }
    if wantsAdvertising, withAdvertisement, !isAdvertising {
      _ = try await manager.call(
        BlueZ.advertisingManagerInterface, "RegisterAdvertisement", [.objectPath(advertisement.path), .properties([:])])
      isAdvertising = true
    }
    Logger.bluez.info(
      "registered the GATT application\(isAdvertising ? " and its advertisement" : "")",
      metadata: ["device": "\(model.advertisement.localName ?? "?")", "adapter": "\(adapter)"])
  }

  /// `RegisterApplication`, with the profile's fixed handles unless bluetoothd refuses them.
  private func registerApplication(on manager: DBusRemoteObject) async throws {
    do {
      _ = try await manager.call(
        BlueZ.gattManagerInterface, "RegisterApplication", [.objectPath(objects.root), .properties([:])])
    } catch let error as DBusError where fixedHandles && !Self.isStillStarting(error) {
      // A stock bluetoothd keeps its own GATT service at 0x0008-0x0011, so a
      // profile with a real device's low handles cannot go there: host it at
      // handles bluetoothd chooses, which every UUID-addressing central takes.
      Logger.bluez.warning(
        "bluetoothd could not place the profile at its fixed handles; registering it at handles bluetoothd chooses",
        metadata: [
          "device": "\(model.advertisement.localName ?? "?")", "adapter": "\(adapter)", "error": "\(error)",
        ])
      fixedHandles = false
      await objects.unexport(on: bus)
      try await objects.export(on: bus, fixedHandles: false) { address in self.methods(for: address) }
      _ = try await manager.call(
        BlueZ.gattManagerInterface, "RegisterApplication", [.objectPath(objects.root), .properties([:])])
    }
  }

  /// Stops advertising, unregisters the application and removes its objects;
  /// the model's `stop()` is called last.
  public func stop() async {
    guard isRunning else { return }
    isRunning = false
    readvertiser?.cancel()
    registration?.cancel()
    _ = await registration?.value
    _ = await advertisingChange?.result
    if registered, let manager = try? DBusRemoteObject(connection: bus, destination: BlueZ.service, path: adapter.path)
    {
      if isAdvertising {
        _ = try? await manager.call(
          BlueZ.advertisingManagerInterface, "UnregisterAdvertisement", [.objectPath(advertisement.path)])
      }
      await unregisterRetired()
      _ = try? await manager.call(BlueZ.gattManagerInterface, "UnregisterApplication", [.objectPath(objects.root)])
      Logger.bluez.info(
        "unregistered the GATT application", metadata: ["device": "\(model.advertisement.localName ?? "?")"])
    }
    try? await bus.unexport(advertisement.path)
    for old in retired { try? await bus.unexport(old.path) }
    retired.removeAll()
    for socket in acquired.values.joined() { socket.socket.close() }
    acquired.removeAll()
    await objects.unexport(on: bus)
    deviceWatch?.cancel()
    ownerWatch?.cancel()
    events.finish()
    await eventTask?.value
    await model.stop()
    for waiter in confirmations.values.joined() { waiter.resume() }
    confirmations.removeAll()
  }

  /// Starts or stops advertising, optionally with new data (a new name, …).
  /// Connections stay up either way. New data is registered as a fresh
  /// advertisement object, since BlueZ reads an advertisement's properties
  /// only when it is registered.
  public func setAdvertising(_ advertising: Bool, data: AdvertisementData? = nil) async throws {
    guard isRunning else { return }
    wantsAdvertising = advertising
    try await serialized { try await self.applyAdvertising(advertising, data: data) }
  }

  /// Runs advertisement changes one at a time, in the order asked.
  private func serialized(_ body: @escaping @Sendable () async throws -> Void) async throws {
    let previous = advertisingChange
    let change = Task {
      _ = await previous?.result
      try await body()
    }
    advertisingChange = change
    try await change.value
  }

  /// Registers the advertisement anew every `advertisingRefresh` while no
  /// central is connected, and while one is, checks that it still is.
  private func readvertiseWhileIdle() async {
    while !Task.isCancelled {
      try? await Task.sleep(for: advertisingRefresh ?? Self.readvertiseInterval)
      if !connected.isEmpty, registered { await forgetCentralsThatLeft() }
      guard !Task.isCancelled, advertisingRefresh != nil, isRunning, registered, wantsAdvertising, connected.isEmpty
      else { continue }
      do {
        try await serialized { try await self.refreshAdvertisement() }
      } catch {
        // Tried again next time; a device that stays unseen shows why here.
        Logger.bluez.debug(
          "advertising again failed",
          metadata: ["device": "\(model.advertisement.localName ?? "?")", "error": "\(error)"])
      }
    }
  }

  /// Registers a copy of the advertisement, then unregisters the one it
  /// replaces: make before break, so the device is never off the air (a
  /// connect that meets no advertisement fails at once in btvirt). When
  /// bluetoothd has no room for a second advertisement, it is switched off
  /// and on instead.
  ///
  /// Only while no central is connected and no link this device ended is
  /// still up in the kernel (`dropped`): the kernel re-enables the
  /// advertising instance a link came from when the link ends, and with
  /// that instance unregistered it advertises the last data non-connectably
  /// from a non-resolvable private address (Linux 6.1,
  /// `hci_disconn_complete_evt` and `hci_enable_advertising_sync`). In the
  /// lab's captures, 199 of the 208 links whose instance a refresh had
  /// removed ended so, and none of the 790 others (docs/lab.md). A central
  /// that connects while the copy is registered may have come from the old
  /// one, which then stays registered (`retired`) until no central is.
  private func refreshAdvertisement() async throws {
    guard isRunning, wantsAdvertising, registered, dropped.isEmpty, connected.isEmpty else { return }
    guard isAdvertising else { return try await applyAdvertising(true, data: nil) }
    refreshing = true
    defer {
      refreshing = false
      refreshSettles = .now + Self.linkReportDelay
    }
    let manager = try DBusRemoteObject(connection: bus, destination: BlueZ.service, path: adapter.path)
    let old = advertisement
    advertisementGeneration += 1
    let fresh = LEAdvertisementObject(
      path: try objects.root.appending("advertisement\(advertisementGeneration)"), data: old.data)
    try await fresh.export(on: bus) { [weak self] call in
      guard self?.fromBlueZ(call, "Release") == true else { throw Self.accessDenied("Release") }
      return []
    }
    do {
      do {
        _ = try await manager.call(
          BlueZ.advertisingManagerInterface, "RegisterAdvertisement", [.objectPath(fresh.path), .properties([:])])
      } catch  where !retired.isEmpty {
        // No central is connected now: the kept copies can go first.
        await unregisterRetired()
        _ = try await manager.call(
          BlueZ.advertisingManagerInterface, "RegisterAdvertisement", [.objectPath(fresh.path), .properties([:])])
      }
    } catch {
      try? await bus.unexport(fresh.path)
      Logger.bluez.debug(
        "no room for a second advertisement; switching it off and on",
        metadata: ["device": "\(model.advertisement.localName ?? "?")", "error": "\(error)"])
      try await applyAdvertising(false, data: nil)
      return try await applyAdvertising(true, data: nil)
    }
    advertisement = fresh
    // While both copies are registered a central can connect from either.
    // Its link is reported (Device1.Connected) a moment after it comes up:
    // wait that long, and keep the old copy while a central is connected. A
    // link that comes up later than that, or while the old copy is being
    // unregistered, is in `linkedDuringRefresh`: refreshed after at once.
    try? await Task.sleep(for: Self.linkReportDelay)
    retired.append(old)
    guard connected.isEmpty, dropped.isEmpty else {
      Logger.bluez.debug(
        "a central connected while the advertisement was refreshed: keeping the replaced copy until it leaves",
        metadata: ["device": "\(model.advertisement.localName ?? "?")"])
      return
    }
    await unregisterRetired()
  }

  /// How long to wait for the report of a link that came up (Device1.Connected):
  /// it came 55 ms after the link in the lab case looked at, with ten
  /// centrals cycling.
  static let linkReportDelay: Duration = .milliseconds(250)

  /// Unregisters the copies a refresh kept (`retired`).
  private func unregisterRetired() async {
    guard !retired.isEmpty else { return }
    let gone = retired
    retired.removeAll()
    let manager = try? DBusRemoteObject(connection: bus, destination: BlueZ.service, path: adapter.path)
    for old in gone {
      do {
        _ = try await manager?.call(
          BlueZ.advertisingManagerInterface, "UnregisterAdvertisement", [.objectPath(old.path)])
      } catch {
        Logger.bluez.debug(
          "unregistering a replaced advertisement failed",
          metadata: ["device": "\(model.advertisement.localName ?? "?")", "error": "\(error)"])
      }
      try? await bus.unexport(old.path)
    }
  }

  private func applyAdvertising(_ advertising: Bool, data: AdvertisementData?) async throws {
    // Without a bluetoothd there is nothing to tell; registering again applies `wantsAdvertising`.
    guard isRunning, registered || data != nil else { return }
    let manager = try DBusRemoteObject(connection: bus, destination: BlueZ.service, path: adapter.path)
    if isAdvertising, registered, !advertising || data != nil {
      _ = try await manager.call(
        BlueZ.advertisingManagerInterface, "UnregisterAdvertisement", [.objectPath(advertisement.path)])
      isAdvertising = false
      await unregisterRetired()
    }
    if let data {
      try? await bus.unexport(advertisement.path)
      advertisementGeneration += 1
      let path = try objects.root.appending("advertisement\(advertisementGeneration)")
      advertisement = LEAdvertisementObject(path: path, data: data)
      try await advertisement.export(on: bus) { [weak self] call in
        guard self?.fromBlueZ(call, "Release") == true else { throw Self.accessDenied("Release") }
        return []
      }
    }
    if advertising, !isAdvertising, registered {
      _ = try await manager.call(
        BlueZ.advertisingManagerInterface, "RegisterAdvertisement", [.objectPath(advertisement.path), .properties([:])])
      isAdvertising = true
    }
  }

  private var advertisementGeneration = 0

  /// Calls the model for each event, in order; answers BlueZ's calls.
  private static func deliver(_ events: AsyncStream<Event>, to model: any PeripheralModel) async {
    for await event in events {
      switch event {
      case .connected(let central): await model.centralConnected(central)
      case .disconnected(let central, let reason): await model.centralDisconnected(central, reason: reason)
      case .mtu(let mtu, let central): await model.mtuChanged(mtu, central: central)
      case .subscription(let address, let central, let on):
        await model.subscriptionChanged(characteristic: address, central: central, subscribed: on)
      case .read(let address, let offset, let central, let reply):
        do {
          let value = try await model.read(characteristic: address, offset: offset, central: central)
          await reply.send([.bytes(value)])
        } catch {
          await reply.fail(BlueZError.serverReply(for: error))
        }
      case .write(let address, let value, let type, let central, let reply):
        do {
          try await model.write(characteristic: address, value: value, type: type, central: central)
          await reply.send()
        } catch {
          await reply.fail(BlueZError.serverReply(for: error))
        }
      case .host(let event): await model.hostEvent(event)
      }
    }
  }

  // MARK: BlueZ's calls

  /// Keeps ``bluez`` current: bluetoothd may restart under a new unique name.
  private func watchBlueZOwner() async throws {
    let rule = try DBusMatchRule(
      sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
      arg0: BlueZ.service)
    let changes = try await bus.signals(matching: rule)
    let owner = try await bus.nameOwner(of: BlueZ.service)
    bluez.withLock { $0 = owner }
    ownerWatch = Task { [weak self] in
      do {
        for try await change in changes {
          let owner = change.body.count == 3 ? change.body[2].string : nil
          await self?.bluezOwnerChanged(owner?.isEmpty == false ? owner : nil)
        }
      } catch {}
    }
  }

  /// bluetoothd went away, came back, or both (a restart): every link of the
  /// old one is gone, and the device is registered with the new one as soon
  /// as it lists the adapter as powered.
  private func bluezOwnerChanged(_ owner: String?) async {
    let before = bluez.withLock { current in
      defer { current = owner }
      return current
    }
    guard isRunning, owner != before else { return }
    Logger.bluez.notice(
      "org.bluez changed hands",
      metadata: ["owner": "\(owner ?? "none")", "device": "\(model.advertisement.localName ?? "?")"])
    if before != nil { stackLost() }
    registration?.cancel()
    if owner != nil { registration = Task { await self.registerAgain() } }
  }

  /// The bluetoothd that knew this device is gone, and so are its links,
  /// its sockets and its registration.
  private func stackLost() {
    lostAt = .now
    registered = false
    isAdvertising = false
    // bluetoothd took its registrations with it.
    let gone = retired
    retired.removeAll()
    Task { for old in gone { try? await bus.unexport(old.path) } }
    for socket in acquired.values.joined() { socket.socket.close() }
    acquired.removeAll()
    dropped.removeAll()
    for central in connected { centralDisconnected(central, reason: .linkLoss) }
    for waiter in confirmations.values.joined() { waiter.resume() }
    confirmations.removeAll()
    Logger.bluez.warning(
      "bluetoothd went away: every link is gone", metadata: ["device": "\(model.advertisement.localName ?? "?")"])
    events.yield(.host(.stackLost))
  }

  /// Waits until the new bluetoothd lists the adapter as powered, then registers again.
  private func registerAgain() async {
    let deadline = ContinuousClock.now + Self.reregistrationTimeout
    var powered = false
    while !Task.isCancelled, isRunning, ContinuousClock.now < deadline {
      let adapterObject = try? DBusRemoteObject(connection: bus, destination: BlueZ.service, path: adapter.path)
      if let value = try? await adapterObject?.property(BlueZ.adapterInterface, "Powered"), value.bool == true {
        powered = true
        break
      }
      try? await Task.sleep(for: .milliseconds(200))
    }
    guard !Task.isCancelled, isRunning, !registered else { return }
    guard powered else {
      let reason = "\(adapter.name) was not powered on the new bluetoothd within \(Self.reregistrationTimeout)"
      Logger.bluez.error(
        "registering again failed",
        metadata: ["device": "\(model.advertisement.localName ?? "?")", "error": "\(reason)"])
      events.yield(.host(.registrationFailed(reason)))
      return
    }
    while true {
      do {
        // One advertisement change at a time: the refresh must not register
        // the advertisement while this does (bluetoothd: AlreadyExists).
        try await serialized { try await self.register() }
        let after = lostAt.map { ContinuousClock.now - $0 } ?? .zero
        Logger.bluez.warning(
          "bluetoothd is back: registered again",
          metadata: ["device": "\(model.advertisement.localName ?? "?")", "after": "\(after)"])
        events.yield(.host(.registeredAgain(after: after)))
        return
      } catch let error as DBusError
        where Self.isStillStarting(error) && ContinuousClock.now < deadline && !Task.isCancelled && isRunning
      {
        // A bluetoothd that has just taken the name exports the adapter before
        // all its managers (seen: RegisterAdvertisement "doesn't exist" 1 s on).
        Logger.bluez.debug(
          "bluetoothd is still starting; registering again in 200 ms",
          metadata: ["device": "\(model.advertisement.localName ?? "?")", "error": "\(error)"])
        try? await Task.sleep(for: .milliseconds(200))
      } catch {
        Logger.bluez.error(
          "registering again failed",
          metadata: ["device": "\(model.advertisement.localName ?? "?")", "error": "\(error)"])
        events.yield(.host(.registrationFailed("\(error)")))
        return
      }
    }
  }

  /// Whether an error says that bluetoothd has not exported everything yet.
  private static func isStillStarting(_ error: DBusError) -> Bool {
    [
      "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
      "org.freedesktop.DBus.Error.UnknownObject",
    ].contains(error.name)
  }

  /// Whether `call` comes from bluetoothd; otherwise it is answered with
  /// `org.freedesktop.DBus.Error.AccessDenied` (and logged).
  private nonisolated func fromBlueZ(_ call: DBusMessage, _ method: String) -> Bool {
    let owner = bluez.withLock { $0 }
    guard let sender = call.sender, sender == owner else {
      Logger.bluez.warning(
        "refused a call that did not come from bluetoothd",
        metadata: ["method": "\(method)", "sender": "\(call.sender ?? "?")", "bluetoothd": "\(owner ?? "none")"])
      return false
    }
    return true
  }

  static func accessDenied(_ method: String) -> DBusError {
    DBusError(
      name: DBusError.Name.accessDenied, message: "\(method): only bluetoothd (the owner of org.bluez) may call this")
  }

  private nonisolated func methods(for address: CharacteristicAddress) -> GATTApplicationObjects.CharacteristicMethods {
    let name = model.profile.characteristic(at: address)?.name ?? "\(address)"
    let log = { @Sendable (method: String, options: [String: DBusValue], more: Logger.Metadata) in
      var metadata: Logger.Metadata = ["characteristic": "\(name)"]
      if let device = options["device"]?.objectPath.flatMap(BlueZ.address(ofDevice:)) {
        metadata["central"] = "\(device)"
      }
      if let mtu = options["mtu"]?.int { metadata["mtu"] = "\(mtu)" }
      Logger.bluez.debug("bluetoothd called \(method)", metadata: metadata.merging(more) { $1 })
    }
    let acquireNotify: DBusOrderedMethodHandler = { call, reply in
      guard self.fromBlueZ(call, "AcquireNotify") else {
        Task { await reply.fail(Self.accessDenied("AcquireNotify")) }
        return
      }
      let options = call.body[0].dictionary ?? [:]
      log("AcquireNotify", options, [:])
      self.inOrder { await self.acquireNotify(address, options: options, reply: reply) }
    }
    return .init(
      read: { call, reply in
        guard self.fromBlueZ(call, "ReadValue") else {
          Task { await reply.fail(Self.accessDenied("ReadValue")) }
          return
        }
        let options = call.body[0].dictionary ?? [:]
        log("ReadValue", options, ["offset": "\(options["offset"]?.int ?? 0)"])
        Task { await self.read(address, options: options, reply: reply) }
      },
      write: { call, reply in
        guard self.fromBlueZ(call, "WriteValue") else {
          Task { await reply.fail(Self.accessDenied("WriteValue")) }
          return
        }
        let value = call.body[0].bytes ?? []
        let options = call.body[1].dictionary ?? [:]
        log("WriteValue", options, ["bytes": "\(value.count)", "type": "\(options["type"]?.string ?? "request")"])
        // Queued synchronously: the order of writes is the order of arrival.
        self.enqueueWrite(address, value: value, options: options, reply: reply)
      },
      startNotify: { call, reply in
        guard self.fromBlueZ(call, "StartNotify") else {
          Task { await reply.fail(Self.accessDenied("StartNotify")) }
          return
        }
        log("StartNotify", [:], [:])
        self.inOrder { await self.setNotifying(address, true, reply: reply) }
      },
      stopNotify: { call, reply in
        guard self.fromBlueZ(call, "StopNotify") else {
          Task { await reply.fail(Self.accessDenied("StopNotify")) }
          return
        }
        log("StopNotify", [:], [:])
        self.inOrder { await self.setNotifying(address, false, reply: reply) }
      },
      confirm: { call in
        guard self.fromBlueZ(call, "Confirm") else { throw Self.accessDenied("Confirm") }
        log("Confirm", [:], [:])
        await self.confirmed(address)
        return []
      },
      acquireNotify: notificationSockets ? acquireNotify : nil)
  }

  private nonisolated func central(from options: [String: DBusValue]) -> CentralID? {
    options["device"]?.objectPath.flatMap(BlueZ.address(ofDevice:)).map { CentralID($0) }
  }

  private nonisolated func enqueueWrite(
    _ address: CharacteristicAddress, value: [UInt8], options: [String: DBusValue], reply: DBusMethodReply
  ) {
    let type: WriteType = options["type"]?.string == "command" ? .withoutResponse : .withResponse
    let central = central(from: options) ?? CentralID("unknown")
    let mtu = options["mtu"]?.int
    // Refused before the model sees them, as ATT would: long writes (BlueZ
    // delivers them with an offset) and values over the maximum length.
    let maximum = model.profile.characteristic(at: address)?.maximumLength
    if options["offset"]?.int ?? 0 != 0 || maximum.map({ value.count > $0 }) == true {
      let error: ATTError = options["offset"]?.int ?? 0 != 0 ? .invalidOffset : .invalidAttributeValueLength
      Task { await reply.fail(BlueZError.serverReply(for: error)) }
      return
    }
    // The event is yielded before any await so that writes keep their order;
    // the connection bookkeeping for a central seen here first follows it.
    events.yield(.write(address, value, type, central, reply))
    Task { await self.noteCentral(central, mtu: mtu) }
  }

  private func read(_ address: CharacteristicAddress, options: [String: DBusValue], reply: DBusMethodReply) async {
    let central = central(from: options) ?? CentralID("unknown")
    noteCentral(central, mtu: options["mtu"]?.int)
    events.yield(.read(address, offset: options["offset"]?.int ?? 0, central, reply))
  }

  /// A central that reads or writes is connected, whatever BlueZ's signals
  /// said so far; an MTU in BlueZ's options is the link's current one.
  private func noteCentral(_ central: CentralID, mtu: Int?) {
    if central.rawValue != "unknown", !connected.contains(central) { centralConnected(central) }
    if let mtu, mtus[central] != mtu {
      Logger.bluez.debug("the link's MTU changed", metadata: ["central": "\(central)", "mtu": "\(mtu)"])
      mtus[central] = mtu
      events.yield(.mtu(mtu, central))
    }
  }

  /// Runs `body` after every subscription call that arrived before it.
  private nonisolated func inOrder(_ body: @escaping @Sendable () async -> Void) {
    subscriptionCalls.withLock { last in
      let previous = last
      last = Task {
        await previous?.value
        await body()
      }
    }
  }

  private func setNotifying(_ address: CharacteristicAddress, _ on: Bool, reply: DBusMethodReply) async {
    // bluetoothd sends StopNotify only when it holds no notification socket.
    // One still acquired here is stale: its AcquireNotify answer crossed this
    // StopNotify (a central switching notifications on and off quickly).
    // Closing it lets bluetoothd drop it too, so that the next subscriber
    // makes it call AcquireNotify again instead of writing into a socket
    // nobody reads (seen in the lab with a subscription storm).
    if !on, let stale = acquired.removeValue(forKey: address) {
      Logger.bluez.debug(
        "StopNotify with a notification socket still acquired: closing it", metadata: ["characteristic": "\(address)"])
      for entry in stale { entry.socket.close() }
      await changeSubscription(address, false, acquired: false)
    } else {
      await changeSubscription(address, on)
    }
    await reply.send()
  }

  /// Subscribes every connected central to `address`, or none.
  private func changeSubscription(_ address: CharacteristicAddress, _ on: Bool, acquired: Bool? = nil) async {
    if on, connected.isEmpty { await refreshConnectedCentrals() }
    let before = subscribed[address] ?? []
    let after = on ? connected : []
    subscribed[address] = after
    for central in after where !before.contains(central) { events.yield(.subscription(address, central, true)) }
    for central in before where !after.contains(central) { events.yield(.subscription(address, central, false)) }
    if let path = objects.characteristicPaths[address] {
      var changes: [String: DBusValue] = ["Notifying": .boolean(on)]
      if let acquired { changes["NotifyAcquired"] = .boolean(acquired) }
      try? await bus.updateProperties(at: path, interface: BlueZ.gattCharacteristicInterface, changes)
    }
  }

  /// BlueZ asks for a notification socket (a central subscribed): it gets
  /// one end of a fresh socket pair, every notification goes to the other.
  private func acquireNotify(_ address: CharacteristicAddress, options: [String: DBusValue], reply: DBusMethodReply)
    async
  {
    let central = central(from: options) ?? CentralID("unknown")
    let mtu = options["mtu"]?.int
    noteCentral(central, mtu: mtu)
    var ends: [Int32] = [-1, -1]
    guard isRunning, socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0
    else {
      // Any error but Failed makes BlueZ fall back to StartNotify.
      let reason = isRunning ? "socketpair failed" : "stopped"
      await reply.fail(DBusError(name: "org.bluez.Error.NotSupported", message: "no socket for \(address): \(reason)"))
      return
    }
    socketsAcquired += 1
    let number = socketsAcquired
    let socket = NotificationSocket(fd: ends[0], mtu: mtu ?? 23) { event in
      if case .closed = event { Task { await self.notificationSocketClosed(address, number) } }
    }
    acquired[address, default: []].append((number, socket))
    await changeSubscription(address, true, acquired: true)
    // libdbus sends a duplicate of BlueZ's end; ours is closed once the reply is out.
    await reply.send([.unixFD(ends[1]), .uint16(UInt16(clamping: mtu ?? 23))])
    Glibc.close(ends[1])
  }

  /// BlueZ closed a notification socket: the central unsubscribed (or left).
  private func notificationSocketClosed(_ address: CharacteristicAddress, _ number: Int) async {
    guard let index = acquired[address]?.firstIndex(where: { $0.number == number }) else { return }
    Logger.bluez.debug("bluetoothd closed a notification socket", metadata: ["characteristic": "\(address)"])
    acquired[address]?.remove(at: index).socket.close()
    if acquired[address]?.isEmpty == true {
      acquired[address] = nil
      await changeSubscription(address, false, acquired: false)
    }
  }

  private func confirmed(_ address: CharacteristicAddress) {
    guard var waiters = confirmations[address], !waiters.isEmpty else { return }
    waiters.removeFirst().resume()
    confirmations[address] = waiters
  }

  // MARK: Connections, from BlueZ's Device1 objects on this adapter

  private func watchDevices() async throws {
    let rule = try DBusMatchRule(sender: BlueZ.service, pathNamespace: adapter.path)
    let signals = try await bus.signals(matching: rule)
    let rootRule = try DBusMatchRule(sender: BlueZ.service, interface: BlueZ.objectManagerInterface, path: BlueZ.root)
    let objectSignals = try await bus.signals(matching: rootRule)
    deviceWatch = Task {
      await withTaskGroup(of: Void.self) { group in
        // The streams end only when the bus connection closes.
        group.addTask { try? await Self.forEach(signals) { await self.deviceSignal($0) } }
        group.addTask { try? await Self.forEach(objectSignals) { await self.deviceSignal($0) } }
      }
    }
    // Centrals that BlueZ lists as connected already are not reported now:
    // BlueZ 5.66 can leave a device of an earlier link marked Connected
    // (seen in the lab between runs), and a central that is really there
    // is reported when it first reads, writes or subscribes.
  }

  private static func forEach(_ signals: DBusSignalStream, _ body: (DBusMessage) async -> Void) async throws {
    for try await signal in signals { await body(signal) }
  }

  private func deviceSignal(_ signal: DBusMessage) async {
    switch signal.member {
    case "PropertiesChanged":
      guard signal.body.first?.string == BlueZ.deviceInterface, let path = signal.path,
        let address = BlueZ.address(ofDevice: path), path.isDescendant(of: adapter.path),
        let isConnected = signal.body[1].dictionary?["Connected"]?.bool
      else { return }
      isConnected ? centralConnected(CentralID(address)) : centralDisconnected(CentralID(address))
    case "InterfacesAdded":
      guard case .objectPath(let path) = signal.body.first, path.isDescendant(of: adapter.path),
        let address = BlueZ.address(ofDevice: path),
        signal.body[1].dictionary?[BlueZ.deviceInterface]?.dictionary?["Connected"]?.bool == true
      else { return }
      centralConnected(CentralID(address))
    case "InterfacesRemoved":
      guard case .objectPath(let path) = signal.body.first, path.isDescendant(of: adapter.path),
        let address = BlueZ.address(ofDevice: path), signal.body[1].strings?.contains(BlueZ.deviceInterface) == true
      else { return }
      centralDisconnected(CentralID(address))
    default:
      return
    }
  }

  /// Asks bluetoothd whether each central still is connected, and reports
  /// those that are not. bluetoothd does not always signal a disconnect
  /// (seen in the lab over many quick connect cycles); a central kept as
  /// connected would stop the device advertising for good.
  private func forgetCentralsThatLeft() async {
    for central in connected {
      guard let path = try? adapter.devicePath(for: central.rawValue) else { continue }
      let device = try? DBusRemoteObject(connection: bus, destination: BlueZ.service, path: path)
      do {
        guard let device, try await device.property(BlueZ.deviceInterface, "Connected").bool == false else {
          continue
        }
      } catch let error as DBusError where error.name == DBusError.Name.unknownObject {
        // The device object is gone: so is the link.
      } catch {
        continue
      }
      Logger.bluez.debug("bluetoothd no longer lists a central as connected", metadata: ["central": "\(central)"])
      centralDisconnected(central)
    }
  }

  private func refreshConnectedCentrals() async {
    guard
      let objects = try? await DBusRemoteObject(connection: bus, destination: BlueZ.service, path: BlueZ.root)
        .managedObjects()
    else { return }
    for (path, interfaces) in objects.sorted(by: { $0.key < $1.key })
    where path.isDescendant(of: adapter.path) && interfaces[BlueZ.deviceInterface]?["Connected"]?.bool == true {
      if let address = BlueZ.address(ofDevice: path) { centralConnected(CentralID(address)) }
    }
  }

  private func centralConnected(_ central: CentralID) {
    guard isRunning, !connected.contains(central), !dropped.contains(central) else { return }
    Logger.bluez.debug(
      "a central connected", metadata: ["central": "\(central)", "device": "\(model.advertisement.localName ?? "?")"])
    if refreshing || ContinuousClock.now < refreshSettles { linkedDuringRefresh.insert(central) }
    connected.append(central)
    events.yield(.connected(central))
  }

  private func centralDisconnected(_ central: CentralID, reason lost: DisconnectReason? = nil) {
    guard let index = connected.firstIndex(of: central) else { return }
    connected.remove(at: index)
    mtus[central] = nil
    // Its subscriptions end first, as on the loopback.
    for (address, centrals) in subscribed.sorted(by: { $0.key < $1.key }) where centrals.contains(central) {
      subscribed[address] = centrals.filter { $0 != central }
      events.yield(.subscription(address, central, false))
    }
    if connected.isEmpty, !acquired.isEmpty {
      // No central left, so no subscription either: the notification
      // sockets go too. bluetoothd keeps a socket across a central's
      // disconnect when that central never switched notifications off, and
      // then never asks the next subscriber's AcquireNotify (seen in the lab
      // after a bleak central that exited subscribed).
      Logger.bluez.debug("no central left: closing the notification sockets", metadata: ["count": "\(acquired.count)"])
      for entry in acquired.values.joined() { entry.socket.close() }
      let addresses = Array(acquired.keys)
      acquired.removeAll()
      Task { for address in addresses { await self.changeSubscription(address, false, acquired: false) } }
    }
    let reason = lost ?? .remote
    Logger.bluez.debug(
      "a central disconnected",
      metadata: [
        "central": "\(central)", "reason": "\(reason)", "device": "\(model.advertisement.localName ?? "?")",
      ])
    events.yield(.disconnected(central, reason))
    if linkedDuringRefresh.remove(central) != nil { advertiseAfterLinkEnd() }
  }

  // MARK: PeripheralHost

  /// Goes at once where it can (``notifyAtOnce(_:characteristic:)``: no
  /// switch to the actor and back), else through the actor, which queues it.
  public nonisolated(nonsending) func notify(_ value: [UInt8], characteristic: CharacteristicAddress)
    async throws(GATTError)
  {
    if try notifyAtOnce(value, characteristic: characteristic) { return }
    try await send(value, characteristic, needing: .notify)
  }

  public func indicate(_ value: [UInt8], characteristic: CharacteristicAddress) async throws(GATTError) {
    try await send(value, characteristic, needing: .indicate)
    let answered: Void? = await withCheckedContinuation { continuation in
      confirmations[characteristic, default: []].append(continuation)
    }
    guard answered != nil, !(subscribed[characteristic] ?? []).isEmpty else {
      throw GATTError(.disconnected(.remote), "the indication on \(characteristic) was not confirmed")
    }
  }

  /// Waits until bluetoothd has read every notification sent so far from
  /// the acquired sockets (`SIOCOUTQ` reads 0 on each), for
  /// ``notificationOrderBound`` at most in all: in a loaded lab bluetoothd
  /// sometimes took over 50 ms, and 1 % of a Muse's EEG sets then reached
  /// muselsl out of order; in a loaded lab it was seen not reading for 3 s
  /// and more around a central leaving. Past the bound it logs a warning
  /// (once a stall) naming the characteristics still unread, as order may
  /// then not hold, and waits ½ s at most until a wait finds all read again.
  /// Notifications sent as D-Bus signals are in order on the bus already.
  public func notificationsTaken() async {
    // Behind already (the last wait ran out): a bluetoothd that neither reads
    // nor closes a socket would otherwise hold every wait for the whole
    // bound; half a second until a wait finds everything read again.
    let bound = bluetoothdBehind ? min(notificationOrderBound, .milliseconds(500)) : notificationOrderBound
    let unread = await unreadCharacteristics(by: ContinuousClock.now + bound)
    guard !unread.isEmpty else {
      bluetoothdBehind = false
      return
    }
    // Once a stall: a central leaving stops bluetoothd reading until it
    // closes the sockets, and every wait until then would say the same.
    guard !bluetoothdBehind else { return }
    bluetoothdBehind = true
    Logger.bluez.warning(
      "bluetoothd has not read the notifications sent so far: the next may overtake them",
      metadata: [
        "unread": "\(unread.map(\.description).joined(separator: ", "))",
        "waited": "\(notificationOrderBound)", "device": "\(model.advertisement.localName ?? "?")",
      ])
  }

  /// The notifications and indications handed to bluetoothd so far, one per
  /// subscribed central (through an acquired socket or a `Value` change).
  public var notificationsSent: Int { notificationsSentByActor + sentAtOnce.load(ordering: .relaxed) }
  private var notificationsSentByActor = 0

  /// Sends a notification without the actor when its characteristic has one
  /// notification socket, already used, with room now: the model's task
  /// writes it, with no switch to the actor and back. `false` otherwise (the
  /// model then awaits ``notify(_:characteristic:)``, which queues it).
  public nonisolated func notifyAtOnce(_ value: [UInt8], characteristic: CharacteristicAddress) throws(GATTError)
    -> Bool
  {
    guard let route = socketRoutes.withLock({ $0[characteristic] }) else { return false }
    try NotificationRule.checkLength(
      value.count, mtu: route.mtu, central: route.central, route.definition, at: characteristic, sending: .notify)
    guard route.socket.sendNow(value) else { return false }
    sentAtOnce.add(1, ordering: .relaxed)
    return true
  }

  /// Waits until bluetoothd has read every notification sent so far on the
  /// sockets it acquired, until `deadline` at most; returns whether it had.
  /// (A run's end: what the device sent before it fell silent is counted.)
  public func allNotificationsTaken(by deadline: ContinuousClock.Instant) async -> Bool {
    await unreadCharacteristics(by: deadline).isEmpty
  }

  /// The characteristics whose sockets still hold notifications bluetoothd
  /// has not read, once each socket was given until `deadline` to drain.
  private func unreadCharacteristics(by deadline: ContinuousClock.Instant) async -> [CharacteristicAddress] {
    var unread: [CharacteristicAddress] = []
    for (address, sockets) in acquired {
      for entry in sockets where !(await entry.socket.drain(within: max(.zero, deadline - ContinuousClock.now))) {
        unread.append(address)
      }
    }
    return unread
  }

  /// How long ``notificationsTaken()`` waits for bluetoothd at most (10 s
  /// unless set). Long enough for a bluetoothd busy with other adapters (a
  /// loaded CI lab); a stream behind by it catches up, as its model sends
  /// what is due.
  public private(set) var notificationOrderBound: Duration = .seconds(10)

  /// Sets ``notificationOrderBound``.
  public func setNotificationOrderBound(_ bound: Duration) {
    notificationOrderBound = bound
  }

  private func send(_ value: [UInt8], _ address: CharacteristicAddress, needing property: CharacteristicProperties)
    async throws(GATTError)
  {
    let definition = try NotificationRule.definition(in: model.profile, at: address, sending: property)
    guard let path = objects.characteristicPaths[address] else {
      throw GATTError(.notFound, "no characteristic \(address) in the profile")
    }
    let centrals = subscribed[address] ?? []
    guard let first = centrals.first else { throw NotificationRule.noSubscribers(definition, at: address) }
    var smallest = (mtu: mtus[first] ?? 23, central: first)
    for central in centrals.dropFirst() where (mtus[central] ?? 23) < smallest.mtu {
      smallest = (mtus[central] ?? 23, central)
    }
    try NotificationRule.checkLength(
      value.count, mtu: smallest.mtu, central: smallest.central, definition, at: address, sending: property)
    if let sockets = acquired[address], !sockets.isEmpty {
      let changes = routeChanges
      var delivered = false
      for (number, socket) in sockets {
        do throws(NotificationSocket.Closed) {
          try await socket.send(value)
          delivered = true
          notificationsSentByActor += 1
        } catch {
          await notificationSocketClosed(address, number)
        }
      }
      if delivered {
        // Nothing changed meanwhile (a change forgets the routes): the next value may go at once.
        if property == .notify, sockets.count == 1, changes == routeChanges {
          let route = SocketRoute(
            socket: sockets[0].socket, mtu: smallest.mtu, central: smallest.central, definition: definition)
          socketRoutes.withLock { $0[address] = route }
        }
        return
      }
      guard !(subscribed[address] ?? []).isEmpty else {
        throw GATTError(.noSubscribers, "the central unsubscribed from \(address)")
      }
    }
    do {
      try await bus.updateProperties(at: path, interface: BlueZ.gattCharacteristicInterface, ["Value": .bytes(value)])
      // bluetoothd sends the new value to every subscribed central.
      notificationsSentByActor += (subscribed[address] ?? []).count
    } catch {
      throw BlueZError.gattError(error, "notifying \(address)")
    }
  }

  public func subscribers(of characteristic: CharacteristicAddress) async -> [CentralID] {
    subscribed[characteristic] ?? []
  }

  public var connectedCentrals: [CentralID] { connected }

  public func mtu(for central: CentralID) async -> Int? {
    connected.contains(central) ? (mtus[central] ?? 23) : nil
  }

  public func setAdvertisingEnabled(_ enabled: Bool) async {
    do {
      try await setAdvertising(enabled, data: nil)
    } catch {
      Logger.bluez.warning(
        "the device could not \(enabled ? "start" : "stop") advertising",
        metadata: ["device": "\(model.advertisement.localName ?? "?")", "error": "\(error)"])
    }
  }

  public func disconnect(_ central: CentralID) async {
    guard connected.contains(central), let path = try? adapter.devicePath(for: central.rawValue) else { return }
    // For the device the link ends now, as on a real radio: its
    // subscriptions end and nothing more is sent on it.
    centralDisconnected(central, reason: .local)
    dropped.insert(central)
    let device = try? DBusRemoteObject(connection: bus, destination: BlueZ.service, path: path)
    _ = try? await device?.call(BlueZ.deviceInterface, "Disconnect")
    // bluetoothd answers once the link is down (or not at all: then it never was).
    dropped.remove(central)
    advertiseAfterLinkEnd()
  }

  /// Refreshes the advertisement at once when a link the device ended is
  /// down, rather than at the next `advertisingRefresh`: the central that
  /// lost the device scans for it again at once, and btvirt shows it an
  /// advertisement only when scanning or the advertisement is switched on.
  /// (In the lab, with nothing refreshed until then, the central found the
  /// device again only at the next refresh, 3.4 s after the link ended.)
  /// Not after every link a central ended: in a lab run with that too, 4
  /// of 1,000 bleak cycles timed out connecting (docs/lab.md); only after
  /// one that came up during a refresh (`linkedDuringRefresh`).
  private func advertiseAfterLinkEnd() {
    guard advertisingRefresh != nil, isRunning, registered, wantsAdvertising, connected.isEmpty, dropped.isEmpty
    else { return }
    Task {
      do {
        try await serialized { try await self.refreshAdvertisement() }
      } catch {
        Logger.bluez.debug(
          "advertising again after a link ended failed",
          metadata: ["device": "\(model.advertisement.localName ?? "?")", "error": "\(error)"])
      }
    }
  }
}
