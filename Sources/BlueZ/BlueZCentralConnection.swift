import DBus
import GATT
import Logging

/// A GATT client connection through BlueZ: BlueZ's `Device1` and the
/// `GattService1`/`GattCharacteristic1` objects it resolved below it.
public actor BlueZCentralConnection: CentralConnection {
  public nonisolated let peripheral: PeripheralID
  let device: DBusRemoteObject
  let bus: DBusConnection
  /// Counts the notifications its subscriptions receive.
  let received: NotificationCounter
  /// Where a subscription refused for a session bluetoothd kept marks the device.
  let devicesToForget: DevicesToForget
  private var characteristics: [CharacteristicAddress: (path: ObjectPath, properties: CharacteristicProperties)] = [:]
  /// The `GattDescriptor1` objects of each characteristic, by UUID.
  private var descriptorPaths: [CharacteristicAddress: [BluetoothUUID: ObjectPath]] = [:]
  private var services: [DiscoveredService] = []
  private var reason: DisconnectReason?
  private var closingLocally = false
  private var eventSinks: [Int: AsyncStream<ConnectionEvent>.Continuation] = [:]
  private var nextSink = 0
  private var notificationSinks: [Int: NotificationStream.Continuation] = [:]
  /// The sockets of subscriptions made with `AcquireNotify`, by sink.
  private var acquiredSockets: [Int: (socket: NotificationSocket, characteristic: DBusRemoteObject)] = [:]
  /// Characteristics whose acquired socket was closed before the disconnect.
  private var closedSockets: [DBusRemoteObject] = []
  private var currentMTU = 23
  private var watch: Task<Void, Never>?
  private var ownerWatch: Task<Void, Never>?

  static func open(
    peripheral: PeripheralID, device: DBusRemoteObject, bus: DBusConnection, received: NotificationCounter,
    devicesToForget: DevicesToForget
  ) async throws -> BlueZCentralConnection {
    let connection = BlueZCentralConnection(
      peripheral: peripheral, device: device, bus: bus, received: received, devicesToForget: devicesToForget)
    try await connection.start()
    return connection
  }

  private init(
    peripheral: PeripheralID, device: DBusRemoteObject, bus: DBusConnection, received: NotificationCounter,
    devicesToForget: DevicesToForget
  ) {
    self.peripheral = peripheral
    self.device = device
    self.bus = bus
    self.received = received
    self.devicesToForget = devicesToForget
  }

  private func start() async throws {
    let changes = try await bus.signals(
      matching: DBusMatchRule(
        sender: BlueZ.service, interface: BlueZ.propertiesInterface, member: "PropertiesChanged", path: device.path))
    watch = Task { [weak self] in
      do {
        for try await change in changes where change.body.first?.string == BlueZ.deviceInterface {
          if change.body[1].dictionary?["Connected"]?.bool == false {
            await self?.ended()
            return
          }
        }
      } catch {}
    }
    // bluetoothd going away (a crash, a restart) takes every link with it,
    // and says nothing about them on the way out.
    let owners = try await bus.signals(
      matching: DBusMatchRule(
        sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
        arg0: BlueZ.service))
    ownerWatch = Task { [weak self] in
      do {
        for try await _ in owners {
          Logger.bluez.warning("bluetoothd went away: the link is gone")
          await self?.ended(lost: true)
          return
        }
      } catch {}
    }
    try await loadServices()
  }

  private func loadServices() async throws {
    let objects = try await DBusRemoteObject(connection: bus, destination: BlueZ.service, path: BlueZ.root)
      .managedObjects()
    var found: [ObjectPath: (uuid: BluetoothUUID, primary: Bool)] = [:]
    for (path, interfaces) in objects where path.isDescendant(of: device.path) {
      if let service = interfaces[BlueZ.gattServiceInterface], let uuid = service["UUID"]?.string {
        found[path] = (try BluetoothUUID(string: uuid), service["Primary"]?.bool ?? true)
      }
    }
    var discovered: [DiscoveredService] = []
    for (servicePath, service) in found.sorted(by: { $0.key < $1.key }) {
      var chars: [DiscoveredCharacteristic] = []
      for (path, interfaces) in objects.sorted(by: { $0.key < $1.key }) {
        guard let characteristic = interfaces[BlueZ.gattCharacteristicInterface],
          characteristic["Service"]?.objectPath == servicePath, let uuidText = characteristic["UUID"]?.string
        else { continue }
        let uuid = try BluetoothUUID(string: uuidText)
        let properties = CharacteristicProperties(bluezFlags: characteristic["Flags"]?.strings ?? [])
        let descriptorObjects = objects.filter { $0.key.isDescendant(of: path) }.compactMap { entry in
          entry.value[BlueZ.gattDescriptorInterface]?["UUID"]?.string.flatMap { try? BluetoothUUID(string: $0) }
            .map { (uuid: $0, path: entry.key) }
        }
        let descriptors = descriptorObjects.map(\.uuid).sorted()
        let address = CharacteristicAddress(service: service.uuid, characteristic: uuid)
        if characteristics[address] == nil {
          characteristics[address] = (path, properties)
          descriptorPaths[address] = Dictionary(descriptorObjects.map { ($0.uuid, $0.path) }) { first, _ in first }
        }
        if let mtu = characteristic["MTU"]?.int { currentMTU = max(currentMTU, mtu) }
        chars.append(DiscoveredCharacteristic(address: address, properties: properties, descriptors: descriptors))
      }
      discovered.append(DiscoveredService(uuid: service.uuid, isPrimary: service.primary, characteristics: chars))
    }
    services = discovered
  }

  public var mtu: Int { currentMTU }

  public func discoverServices() async throws(GATTError) -> [DiscoveredService] {
    try checkConnected()
    return services
  }

  private func checkConnected() throws(GATTError) {
    if let reason { throw GATTError(.notConnected, "\(peripheral) is not connected (\(reason))") }
  }

  private func lookup(_ address: CharacteristicAddress) throws(GATTError) -> (
    object: DBusRemoteObject, properties: CharacteristicProperties
  ) {
    try checkConnected()
    guard let entry = characteristics[address],
      let object = try? DBusRemoteObject(connection: bus, destination: BlueZ.service, path: entry.path)
    else { throw GATTError(.notFound, "\(peripheral) has no characteristic \(address)") }
    return (object, entry.properties)
  }

  private func failure(_ error: any Error, _ what: String) -> GATTError {
    if let reason { return GATTError(.disconnected(reason), "\(what): \(peripheral) \(reason)") }
    return BlueZError.gattError(error, what)
  }

  public func read(_ characteristic: CharacteristicAddress) async throws(GATTError) -> [UInt8] {
    let (object, properties) = try lookup(characteristic)
    guard properties.contains(.read) else { throw GATTError(.notSupported, "\(characteristic) cannot be read") }
    do {
      return try await object.call(BlueZ.gattCharacteristicInterface, "ReadValue", [.properties([:])]).first?.bytes
        ?? []
    } catch {
      throw failure(error, "reading \(characteristic)")
    }
  }

  /// Reads the descriptor from the peripheral (`GattDescriptor1.ReadValue`).
  public func read(descriptor: BluetoothUUID, of characteristic: CharacteristicAddress) async throws(GATTError)
    -> [UInt8]
  {
    _ = try lookup(characteristic)
    guard let path = descriptorPaths[characteristic]?[descriptor],
      let object = try? DBusRemoteObject(connection: bus, destination: BlueZ.service, path: path)
    else { throw GATTError(.notFound, "\(characteristic) of \(peripheral) has no descriptor \(descriptor)") }
    do {
      return try await object.call(BlueZ.gattDescriptorInterface, "ReadValue", [.properties([:])]).first?.bytes ?? []
    } catch {
      throw failure(error, "reading descriptor \(descriptor) of \(characteristic)")
    }
  }

  public func write(_ value: [UInt8], to characteristic: CharacteristicAddress, type: WriteType) async throws(GATTError)
  {
    let (object, properties) = try lookup(characteristic)
    let needed: CharacteristicProperties = type == .withResponse ? .write : .writeWithoutResponse
    guard properties.contains(needed) else {
      throw GATTError(
        .notSupported,
        "\(characteristic) does not allow \(type == .withResponse ? "writes with response" : "writes without response")"
      )
    }
    if type == .withoutResponse, value.count > currentMTU - 3 {
      throw GATTError(.valueTooLong, "\(value.count) bytes do not fit ATT_MTU − 3 = \(currentMTU - 3)")
    }
    let options: [String: DBusValue] = ["type": .string(type == .withResponse ? "request" : "command")]
    do {
      _ = try await object.call(BlueZ.gattCharacteristicInterface, "WriteValue", [.bytes(value), .properties(options)])
    } catch {
      throw failure(error, "writing \(characteristic)")
    }
  }

  /// Subscribes through `AcquireNotify` where BlueZ allows it: a socket on
  /// which every notification is one packet, so none is lost or merged. (With
  /// `StartNotify` each notification becomes a change of the `Value`
  /// property, and BlueZ merges changes that come faster than it emits them.)
  /// Falls back to `StartNotify`, e.g. for characteristics that only indicate.
  public func notifications(of characteristic: CharacteristicAddress) async throws(GATTError)
    -> NotificationStream
  {
    let (object, properties) = try lookup(characteristic)
    guard !properties.isDisjoint(with: [.notify, .indicate]) else {
      throw GATTError(.notSupported, "\(characteristic) neither notifies nor indicates")
    }
    let (stream, continuation) = NotificationStream.makeStream()
    let id = nextSink
    nextSink += 1
    // Why AcquireNotify was refused, for the error if StartNotify is refused too.
    var refusal: (any Error)?
    do {
      var acquired: [DBusValue]?
      if properties.contains(.notify) {
        do {
          acquired = try await object.call(BlueZ.gattCharacteristicInterface, "AcquireNotify", [.properties([:])])
        } catch  where Self.heldByAnotherSession(error) && !holdsSocket(of: object) {
          // bluetoothd ends an acquired session on StopNotify, whoever calls
          // it: end the one it holds (another client's, or one an earlier
          // link left behind) and acquire once more.
          Logger.bluez.warning(
            "bluetoothd holds the notifications of \(characteristic) for another session: ending it",
            metadata: ["peripheral": "\(peripheral)", "error": "\(error)"])
          _ = try? await object.call(BlueZ.gattCharacteristicInterface, "StopNotify")
          do {
            acquired = try await object.call(BlueZ.gattCharacteristicInterface, "AcquireNotify", [.properties([:])])
          } catch {
            refusal = error
          }
        } catch {
          refusal = error
        }
      }
      if let acquired, case .unixFD(let fd)? = acquired.first {
        if let mtu = acquired.last?.int { currentMTU = max(currentMTU, mtu) }
        notificationSinks[id] = continuation
        let received = received
        let socket = NotificationSocket(fd: fd, mtu: max(currentMTU, 23)) { event in
          switch event {
          case .packet(let bytes):
            received.increment()
            continuation.yield(bytes)
          case .closed: Task { await self.socketClosed(id, characteristic) }
          }
        }
        acquiredSockets[id] = (socket, object)
        continuation.onTermination = { [weak self] _ in
          socket.close()
          Task { await self?.unsubscribe(id, nil) }
        }
        return stream
      }
      // Each change of `Value` goes to the stream on the bus connection's
      // thread as it is read, with no task woken in between.
      let received = received
      let values = try await bus.receiveSignals(
        matching: DBusMatchRule(
          sender: BlueZ.service, interface: BlueZ.propertiesInterface, member: "PropertiesChanged", path: object.path)
      ) { event in
        switch event {
        case .signal(let change):
          guard change.body.first?.string == BlueZ.gattCharacteristicInterface,
            let value = change.body[1].dictionary?["Value"]?.bytes
          else { return }
          received.increment()
          continuation.yield(value)
        case .closed(let error):
          continuation.finish(throwing: GATTError(.failed, "the D-Bus connection to BlueZ closed: \(error)"))
        }
      }
      do {
        _ = try await object.call(BlueZ.gattCharacteristicInterface, "StartNotify")
      } catch {
        values.cancel()
        guard let refusal else { throw error }
        if Self.heldByAnotherSession(refusal), !holdsSocket(of: object) {
          // Nothing on this link can end it: the next connect forgets the device first.
          devicesToForget.mark(device.path)
          Logger.bluez.warning(
            "bluetoothd still holds a notification session of \(characteristic): the device will be removed before the next connect",
            metadata: ["peripheral": "\(peripheral)", "error": "\(refusal)"])
        }
        throw failure(error, "subscribing to \(characteristic) (AcquireNotify: \(refusal); then StartNotify)")
      }
      notificationSinks[id] = continuation
      continuation.onTermination = { [weak self] _ in
        values.cancel()
        Task { await self?.unsubscribe(id, object) }
      }
    } catch {
      throw failure(error, "subscribing to \(characteristic)")
    }
    return stream
  }

  /// BlueZ closed a notification socket: the link went down, or BlueZ gave up the subscription.
  private func socketClosed(_ id: Int, _ characteristic: CharacteristicAddress) async {
    guard notificationSinks[id] != nil, reason == nil else { return }
    // The socket's end can come before the signal that says why: ask.
    do {
      if try await device.property(BlueZ.deviceInterface, "Connected").bool == false {
        ended()
        return
      }
    } catch let error as DBusError where Self.bluetoothdLostTheDevice(error) {
      // No bluetoothd to answer, or a new one that never knew this device
      // (killed and started again): the link went with the old one.
      Logger.bluez.debug(
        "a notification socket closed and bluetoothd no longer knows the device: the link is gone",
        metadata: ["peripheral": "\(peripheral)", "error": "\(error)"])
      ended(lost: true)
      return
    } catch {
      // A bluetoothd that is there but slow to answer says nothing about the link.
    }
    guard reason == nil, let sink = notificationSinks[id] else { return }
    notificationSinks[id] = nil
    sink.finish(throwing: GATTError(.failed, "BlueZ ended the notifications of \(characteristic)"))
  }

  /// Whether this connection holds an acquired notification socket of `characteristic`.
  private func holdsSocket(of characteristic: DBusRemoteObject) -> Bool {
    acquiredSockets.values.contains { $0.characteristic.path == characteristic.path }
  }

  /// Whether `AcquireNotify` was refused because bluetoothd holds the
  /// characteristic's notifications for a session already
  /// (`org.bluez.Error.NotPermitted: Notify acquired`). When this connection
  /// holds none of its own there, it is another client's, or one an earlier
  /// link left behind.
  static func heldByAnotherSession(_ error: any Error) -> Bool {
    guard let dbus = error as? DBusError, let bluez = BlueZError(dbus) else { return false }
    return bluez.code == .notPermitted && bluez.message.localizedCaseInsensitiveContains("acquired")
  }

  /// Errors that mean the bluetoothd that made this link is gone: no owner of
  /// `org.bluez`, the call cut off by its exit, or a new one without the device.
  private static func bluetoothdLostTheDevice(_ error: DBusError) -> Bool {
    [
      DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner, DBusError.Name.noReply,
      DBusError.Name.unknownObject, DBusError.Name.unknownInterface, DBusError.Name.unknownMethod,
    ].contains(error.name)
  }

  private func unsubscribe(_ id: Int, _ object: DBusRemoteObject?) async {
    // A socket closed here is released by bluetoothd a moment later; `disconnect` waits for that.
    if let closed = acquiredSockets.removeValue(forKey: id) { closedSockets.append(closed.characteristic) }
    guard notificationSinks.removeValue(forKey: id) != nil, reason == nil, let object else { return }
    _ = try? await object.call(BlueZ.gattCharacteristicInterface, "StopNotify")
  }

  public func disconnect() async {
    guard reason == nil else { return }
    closingLocally = true
    // Our ends of the acquired sockets close first, and this program stays on
    // the bus until bluetoothd has released every one of them (its
    // `NotifyAcquired` reads false): bluetoothd 5.66 crashes (src/gatt-client.c,
    // sock_hup after notify_client_free) when a client's bus connection goes
    // away before its acquired sockets are released. A fixed 200 ms pause was
    // not enough on a loaded machine (a CI rehearsal, 2026-11-24).
    let sockets = Array(acquiredSockets.values)
    acquiredSockets.removeAll()
    for entry in sockets { entry.socket.close() }
    let released = sockets.map(\.characteristic) + closedSockets
    closedSockets.removeAll()
    // From a task of its own: a client is most often disconnected because it
    // was cancelled (Ctrl-C, `--duration`, the end of a run), and a cancelled
    // task's calls are cancelled too — the link stayed up after the program
    // had gone, and the next scan never saw the device advertise again.
    let device = device
    await Task {
      await Self.waitUntilReleased(released)
      _ = try? await device.call(BlueZ.deviceInterface, "Disconnect")
    }.value
    ended()
  }

  /// Waits, 2 s at most, until bluetoothd reports each characteristic's
  /// notification socket released (or cannot say: then there is nothing to wait for).
  private static func waitUntilReleased(_ characteristics: [DBusRemoteObject]) async {
    let deadline = ContinuousClock.now + .seconds(2)
    for characteristic in characteristics {
      while ContinuousClock.now < deadline {
        let acquired = try? await characteristic.property(BlueZ.gattCharacteristicInterface, "NotifyAcquired").bool
        guard acquired == true else { break }
        try? await Task.sleep(for: .milliseconds(20))
      }
    }
  }

  /// - Parameter lost: bluetoothd went away, and the link with it.
  private func ended(lost: Bool = false) {
    guard reason == nil else { return }
    let why: DisconnectReason = lost ? .linkLoss : closingLocally ? .local : .remote
    reason = why
    Logger.bluez.debug("the link ended", metadata: ["peripheral": "\(peripheral)", "reason": "\(why)"])
    watch?.cancel()
    ownerWatch?.cancel()
    for sink in notificationSinks.values {
      if why == .local {
        sink.finish()
      } else {
        sink.finish(throwing: GATTError(.disconnected(why), "\(peripheral) \(why)"))
      }
    }
    notificationSinks.removeAll()
    acquiredSockets.removeAll()
    for sink in eventSinks.values {
      sink.yield(.disconnected(why))
      sink.finish()
    }
    eventSinks.removeAll()
  }

  public var disconnectReason: DisconnectReason? { reason }

  public nonisolated func events() -> AsyncStream<ConnectionEvent> {
    let (stream, continuation) = AsyncStream<ConnectionEvent>.makeStream()
    Task { await self.addEventSink(continuation) }
    return stream
  }

  private func addEventSink(_ continuation: AsyncStream<ConnectionEvent>.Continuation) {
    if let reason {
      continuation.yield(.disconnected(reason))
      continuation.finish()
      return
    }
    let id = nextSink
    nextSink += 1
    eventSinks[id] = continuation
  }
}
