import DBus
import GATT
import Logging

/// The central role on one adapter through BlueZ: discovery with a filter,
/// connecting, and GATT client connections.
public struct BlueZCentral: CentralLink {
  public let adapter: BluetoothAdapter
  let bus: DBusConnection
  /// How long a link may be up with its services not resolved before a
  /// connect takes it for stalled, ends it and connects once more
  /// (``defaultLinkStallLimit``).
  public let linkStallLimit: Duration
  /// Counts every notification and indication its connections receive.
  public let received: NotificationCounter
  /// Devices a connection found bluetoothd holding a notification session
  /// of an earlier link on: forgotten before the next connect to them.
  let devicesToForget = DevicesToForget()

  public init(
    adapter: BluetoothAdapter, bus: DBusConnection, linkStallLimit: Duration = defaultLinkStallLimit,
    received: NotificationCounter = NotificationCounter()
  ) {
    self.adapter = adapter
    self.bus = bus
    self.linkStallLimit = linkStallLimit
    self.received = received
  }

  /// Discovers LE peripherals passing `filter` (BlueZ `SetDiscoveryFilter`
  /// with `Transport: le`, `UUIDs` and `Pattern`, checked again locally):
  /// those heard advertising, and those already connected on this adapter.
  /// Discovery stops when the stream's consumer stops.
  public func scan(filter: ScanFilter) -> AsyncStream<DiscoveredPeripheral> {
    let (stream, continuation) = AsyncStream<DiscoveredPeripheral>.makeStream()
    let task = Task { await discover(filter, into: continuation) }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  private func discover(_ filter: ScanFilter, into continuation: AsyncStream<DiscoveredPeripheral>.Continuation) async {
    defer { continuation.finish() }
    let adapterObject: DBusRemoteObject
    let signals: DBusSignalStream
    do {
      adapterObject = try DBusRemoteObject(connection: bus, destination: BlueZ.service, path: adapter.path)
      signals = try await bus.signals(matching: DBusMatchRule(sender: BlueZ.service))
      // Before discovery starts: afterwards it would forget what it finds.
      await forgetStaleDevices(adapterObject)
      var options: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .boolean(false)]
      if !filter.serviceUUIDs.isEmpty { options["UUIDs"] = .strings(filter.serviceUUIDs.map(\.uuidString)) }
      if let prefix = filter.namePrefix { options["Pattern"] = .string(prefix) }
      _ = try await adapterObject.call(BlueZ.adapterInterface, "SetDiscoveryFilter", [.properties(options)])
      do {
        _ = try await adapterObject.call(BlueZ.adapterInterface, "StartDiscovery")
      } catch let error as DBusError where BlueZError(error)?.code == .inProgress {
        // This bus connection is discovering already (another scan of ours): share it.
      }
    } catch {
      return
    }
    var devices: [ObjectPath: [String: DBusValue]] = [:]
    var reported: Set<ObjectPath> = []
    // Heard on air in this scan (it has an RSSI), or connected on this adapter
    // already — left up by a program that was killed, or another's: such a
    // device does not advertise, and BlueZ dropped its RSSI when the scan that
    // found it stopped.
    func consider(_ path: ObjectPath) {
      guard !reported.contains(path), let properties = devices[path],
        properties["RSSI"] != nil || properties["Connected"]?.bool == true,
        let address = properties["Address"]?.string, !Self.isNonResolvablePrivate(properties)
      else { return }
      let advertisement = Self.advertisement(from: properties)
      guard filter.matches(advertisement) else { return }
      reported.insert(path)
      continuation.yield(
        DiscoveredPeripheral(
          id: PeripheralID(address), rssi: properties["RSSI"]?.int ?? 0, advertisement: advertisement))
    }
    if let objects = try? await DBusRemoteObject(connection: bus, destination: BlueZ.service, path: BlueZ.root)
      .managedObjects()
    {
      for (path, interfaces) in objects.sorted(by: { $0.key < $1.key }) where path.isDescendant(of: adapter.path) {
        if let device = interfaces[BlueZ.deviceInterface] {
          devices[path] = device
          consider(path)
        }
      }
    }
    do {
      for try await signal in signals {
        if Task.isCancelled { break }
        switch signal.member {
        case "InterfacesAdded":
          guard case .objectPath(let path) = signal.body.first, path.isDescendant(of: adapter.path),
            let device = signal.body[1].dictionary?[BlueZ.deviceInterface]?.dictionary
          else { continue }
          devices[path] = device.mapValues(\.unwrapped)
          consider(path)
        case "PropertiesChanged":
          guard let path = signal.path, devices[path] != nil, signal.body.first?.string == BlueZ.deviceInterface,
            let changed = signal.body[1].dictionary
          else { continue }
          devices[path]?.merge(changed.mapValues(\.unwrapped)) { $1 }
          consider(path)
        default:
          continue
        }
      }
    } catch {}
    // The scan's task is cancelled by now, and a cancelled task's calls are
    // cancelled too: stop discovery from a task of its own.
    await Task { _ = try? await adapterObject.call(BlueZ.adapterInterface, "StopDiscovery") }.value
  }

  /// Whether a device advertises from a non-resolvable private address (a
  /// random address whose two top bits are 0). Such an address is what
  /// advertising that takes no connections uses, so a scan does not report
  /// it: a central that picked it would never connect. The kernel advertises
  /// so, with the last advertising data, for a moment after a link as
  /// peripheral ends (docs/lab.md); Doppel's central picked that device 2
  /// times in 1,000 lab cycles.
  static func isNonResolvablePrivate(_ device: [String: DBusValue]) -> Bool {
    guard device["AddressType"]?.string == "random", let address = device["Address"]?.string,
      let top = UInt8(address.prefix(2), radix: 16)
    else { return false }
    return top & 0xC0 == 0
  }

  /// BlueZ keeps what it learnt of a device (its name, its UUIDs, even its
  /// GATT services once connected) after the device is gone, and a scan would
  /// report that. Devices that are neither connected nor paired hold nothing
  /// durable: forget them, so that a scan reports what is on air now.
  private func forgetStaleDevices(_ adapterObject: DBusRemoteObject) async {
    guard
      let objects = try? await DBusRemoteObject(connection: bus, destination: BlueZ.service, path: BlueZ.root)
        .managedObjects()
    else { return }
    for (path, interfaces) in objects where path.isDescendant(of: adapter.path) {
      guard let device = interfaces[BlueZ.deviceInterface], device["Connected"]?.bool == false,
        device["Paired"]?.bool != true
      else { continue }
      _ = try? await adapterObject.call(BlueZ.adapterInterface, "RemoveDevice", [.objectPath(path)])
    }
  }

  static func advertisement(from device: [String: DBusValue]) -> AdvertisementData {
    var data = AdvertisementData()
    data.localName = device["Name"]?.string ?? device["Alias"]?.string.flatMap { $0.contains("-") ? nil : $0 }
    data.serviceUUIDs = (device["UUIDs"]?.strings ?? []).compactMap { try? BluetoothUUID(string: $0) }
    if let manufacturer = device["ManufacturerData"]?.dictionary == nil ? nil : device["ManufacturerData"],
      case .dictionary(_, _, let entries) = manufacturer.unwrapped
    {
      for entry in entries {
        if let company = entry.key.int, let bytes = entry.value.bytes { data.manufacturerData[UInt16(company)] = bytes }
      }
    }
    for (uuid, value) in device["ServiceData"]?.dictionary ?? [:] {
      if let uuid = try? BluetoothUUID(string: uuid), let bytes = value.bytes { data.serviceData[uuid] = bytes }
    }
    if let appearance = device["Appearance"]?.int { data.appearance = UInt16(truncatingIfNeeded: appearance) }
    if let power = device["TxPower"]?.int { data.txPowerLevel = Int8(truncatingIfNeeded: power) }
    return data
  }

  /// Connects (`Device1.Connect`) and waits until BlueZ has resolved the
  /// peripheral's services, within `timeout`. A peripheral bluetoothd no
  /// longer knows is discovered again first, within the same `timeout`. A
  /// link that stalls (up for `linkStallLimit` with no services) is ended
  /// and connected once more, within the same `timeout` too.
  public func connect(_ peripheral: PeripheralID, timeout: Duration) async throws(GATTError) -> any CentralConnection {
    do {
      let path = try adapter.devicePath(for: peripheral.rawValue)
      let device = try DBusRemoteObject(connection: bus, destination: BlueZ.service, path: path)
      if devicesToForget.take(path) { await forget(device, peripheral) }
      // bluetoothd removes a device it last heard as not connectable (a scan
      // response alone, say) when a discovery stops: a scan that found it,
      // then stopped, can leave nothing to connect to. Discover it again,
      // and go on discovering until bluetoothd has taken the connect.
      let rediscovery = try await rediscoverIfForgotten(device, peripheral, within: timeout)
      defer { withExtendedLifetime(rediscovery) {} }
      do {
        return try await withDeadline(timeout, "connecting to \(peripheral)") {
          do {
            return try await attempt(device, peripheral, timeout: timeout, stallLimit: linkStallLimit)
          } catch is LinkStall {
            Logger.bluez.warning(
              "the link came up, but its services were not resolved within \(linkStallLimit): connecting again",
              metadata: ["peripheral": "\(peripheral)", "adapter": "\(adapter)"])
            _ = try? await device.call(BlueZ.deviceInterface, "Disconnect", timeout: .seconds(3))
            // A temporary device goes with its link.
            let again = try await rediscoverIfForgotten(device, peripheral, within: timeout)
            defer { withExtendedLifetime(again) {} }
            return try await attempt(device, peripheral, timeout: timeout, stallLimit: nil)
          }
        }
      } catch {
        // bluetoothd keeps trying a connect whose caller gave up (timed out,
        // cancelled at the end of a run) and then links the next device that
        // advertises from that address, whose own client never gets a link
        // (seen in the lab between two scenarios). Called off the cancelled
        // task, whose own calls are cancelled too.
        await Task { _ = try? await device.call(BlueZ.deviceInterface, "Disconnect", timeout: .seconds(3)) }.value
        throw error
      }
    } catch {
      Logger.bluez.debug("connecting failed", metadata: ["peripheral": "\(peripheral)", "error": "\(error)"])
      throw BlueZError.gattError(error, "connecting to \(peripheral) from \(adapter)")
    }
  }

  /// Ends the device's link and removes it from bluetoothd, so that it lets
  /// go of what it kept of earlier links (``DevicesToForget``); the connect
  /// that follows discovers it again. Each call is bounded, and one that
  /// fails leaves the connect to report what is wrong.
  private func forget(_ device: DBusRemoteObject, _ peripheral: PeripheralID) async {
    Logger.bluez.warning(
      "bluetoothd held a notification session of an earlier link: removing the device before connecting again",
      metadata: ["peripheral": "\(peripheral)", "adapter": "\(adapter)"])
    // Off the caller's task: a cancelled task's calls are cancelled too.
    await Task {
      _ = try? await device.call(BlueZ.deviceInterface, "Disconnect", timeout: .seconds(3))
      guard let adapterObject = try? DBusRemoteObject(connection: bus, destination: BlueZ.service, path: adapter.path)
      else { return }
      do {
        _ = try await adapterObject.call(
          BlueZ.adapterInterface, "RemoveDevice", [.objectPath(device.path)], timeout: .seconds(3))
      } catch {
        Logger.bluez.warning(
          "removing the device failed", metadata: ["peripheral": "\(peripheral)", "error": "\(error)"])
      }
    }.value
  }

  /// How long a link may be up with its services not resolved before the
  /// connect is taken for stalled and made again. In the lab, one link of
  /// 2,279 came up at HCI level while bluetoothd read neither side's first
  /// ATT request, so `Device1.Connect` never answered (docs/lab.md). In all
  /// the others, the central's first subscription followed within 3.5 s of
  /// the link (most within 0.5 s).
  public static let defaultLinkStallLimit: Duration = .seconds(8)

  /// The link came up and stayed up without its services resolved.
  private struct LinkStall: Error {}

  /// One `Device1.Connect` until the services are resolved and the
  /// connection is open; throws ``LinkStall`` when the link has been up for
  /// `stallLimit` without them.
  private func attempt(_ device: DBusRemoteObject, _ peripheral: PeripheralID, timeout: Duration, stallLimit: Duration?)
    async throws -> any CentralConnection
  {
    // Each attempt its own subscription: a task cancelled while waiting in
    // a signal stream ends that stream.
    let changes = try await bus.signals(
      matching: DBusMatchRule(
        sender: BlueZ.service, interface: BlueZ.propertiesInterface, member: "PropertiesChanged", path: device.path))
    Logger.bluez.debug("connecting", metadata: ["peripheral": "\(peripheral)", "adapter": "\(adapter)"])
    return try await withThrowingTaskGroup(of: (any CentralConnection)?.self) { group in
      group.addTask {
        _ = try await device.call(BlueZ.deviceInterface, "Connect", timeout: timeout)
        Logger.bluez.debug("connected; waiting for its services", metadata: ["peripheral": "\(peripheral)"])
        var resolved = try await device.property(BlueZ.deviceInterface, "ServicesResolved").bool == true
        if !resolved {
          for try await change in changes where change.body.first?.string == BlueZ.deviceInterface {
            if change.body[1].dictionary?["ServicesResolved"]?.bool == true {
              resolved = true
              break
            }
            // A stalled link's end can be signalled after the next link is
            // up: believe only what bluetoothd says now.
            if change.body[1].dictionary?["Connected"]?.bool == false,
              try await device.property(BlueZ.deviceInterface, "Connected").bool != true
            {
              throw GATTError(.disconnected(.remote), "\(peripheral) disconnected before its services were resolved")
            }
          }
        }
        guard resolved else { throw CancellationError() }
        let connection = try await BlueZCentralConnection.open(
          peripheral: peripheral, device: device, bus: bus, received: received, devicesToForget: devicesToForget)
        Logger.bluez.debug("connected, services resolved", metadata: ["peripheral": "\(peripheral)"])
        return connection
      }
      if let stallLimit {
        group.addTask {
          try await Self.watchForStall(device, limit: stallLimit)
          return nil
        }
      }
      defer { group.cancelAll() }
      while let result = try await group.next() {
        if let connection = result { return connection }
      }
      throw GATTError(.failed, "connecting to \(peripheral): nothing ran")
    }
  }

  /// Returns when the services are resolved; throws ``LinkStall`` when the
  /// link has been up for `limit` without them. Polls twice a second; a
  /// poll that fails changes nothing (the connect itself reports errors).
  private static func watchForStall(_ device: DBusRemoteObject, limit: Duration) async throws {
    var upSince: ContinuousClock.Instant?
    while true {
      try await Task.sleep(for: .milliseconds(500))
      guard let state = try? await device.properties(BlueZ.deviceInterface) else { continue }
      if state["ServicesResolved"]?.bool == true { return }
      guard state["Connected"]?.bool == true else {
        upSince = nil
        continue
      }
      let since = upSince ?? .now
      upSince = since
      if ContinuousClock.now - since >= limit { throw LinkStall() }
    }
  }

  /// What a `Get` on an object bluetoothd does not have answers, by libdbus
  /// version and binding.
  private static let noSuchObject: Set<String> = [
    DBusError.Name.unknownObject, DBusError.Name.unknownMethod, DBusError.Name.unknownInterface,
    DBusError.Name.unknownProperty, DBusError.Name.invalidArgs,
  ]

  /// Discovers `peripheral` again (``rediscover(_:within:)``) when bluetoothd
  /// no longer has an object for it; `nil` when it has.
  private func rediscoverIfForgotten(_ device: DBusRemoteObject, _ peripheral: PeripheralID, within limit: Duration)
    async throws -> AsyncStream<DiscoveredPeripheral>?
  {
    try await isKnown(device) ? nil : try await rediscover(peripheral, within: limit)
  }

  /// Whether bluetoothd has an object for the device.
  private func isKnown(_ device: DBusRemoteObject) async throws -> Bool {
    do {
      _ = try await device.property(BlueZ.deviceInterface, "Address")
      return true
    } catch let error as DBusError where Self.noSuchObject.contains(error.name) {
      return false
    }
  }

  /// Discovers `peripheral` again, within `limit`; discovery goes on for as
  /// long as the returned stream is held.
  private func rediscover(_ peripheral: PeripheralID, within limit: Duration) async throws -> AsyncStream<
    DiscoveredPeripheral
  > {
    Logger.bluez.debug(
      "not known to bluetoothd: discovering it again",
      metadata: ["peripheral": "\(peripheral)", "adapter": "\(adapter)"])
    let discovery = scan(filter: ScanFilter())
    let found: Bool
    do {
      found = try await withDeadline(limit, "finding \(peripheral) again") {
        for await seen in discovery where seen.id == peripheral { return true }
        return false
      }
    } catch let error as GATTError where error.code == .timeout {
      found = false
    }
    guard found else {
      throw GATTError(
        .notFound, "\(peripheral) is not known on \(adapter), and was not found advertising within \(limit)")
    }
    return discovery
  }
}

/// Runs `body`, throwing `timeout` if it does not finish within `limit`.
func withDeadline<T: Sendable>(
  _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
  try await withThrowingTaskGroup(of: T.self) { group in
    group.addTask { try await body() }
    group.addTask {
      try await Task.sleep(for: limit)
      throw GATTError(.timeout, "\(what): no answer within \(limit)")
    }
    defer { group.cancelAll() }
    guard let first = try await group.next() else { throw GATTError(.failed, "\(what): nothing ran") }
    return first
  }
}
