import BlueZ
import DBus
import DBusTestSupport
import Glibc
import Synchronization

/// A stand-in for bluetoothd's central side on a private bus: adapter
/// `hci0` and one peripheral with one notifying characteristic whose
/// `AcquireNotify` hands out one end of a socket pair. The peripheral is
/// either connected already (discovery finds nothing new on air), or
/// unknown until discovery starts and then heard advertising — as
/// bluetoothd forgets a device it last heard as not connectable when a
/// discovery stops. The adapter's and the device's method calls are logged.
struct BluetoothdCentralStandIn {
  static let peripheralAddress = "00:AA:01:00:00:02"
  static let service = "d0e20031-0000-4000-8000-00000000c0de"
  static let characteristic = "d0e20032-0000-4000-8000-00000000c0de"

  let bus: DBusConnection
  let adapter: BluetoothAdapter
  let devicePath: ObjectPath
  let ends: SocketEnds
  /// The adapter's and the device's methods a central called, in order
  /// (`StartDiscovery`, `Connect`, `StopDiscovery`, `Disconnect`, …).
  let calls: MethodCallLog

  /// bluetoothd's end of the socket and the one it hands out, each closed
  /// once: a second close could hit a descriptor another test opened since.
  final class SocketEnds: Sendable {
    let bluetoothd: Int32
    let central: Int32
    private let open = Mutex<Set<Int32>>([])

    init(bluetoothd: Int32, central: Int32) {
      self.bluetoothd = bluetoothd
      self.central = central
      open.withLock { $0 = [bluetoothd, central] }
    }

    func close(_ fd: Int32) {
      if open.withLock({ $0.remove(fd) }) != nil { Glibc.close(fd) }
    }
  }

  /// Starts the stand-in; `peripheralKnown: false` exports the peripheral
  /// only once `StartDiscovery` is called, not connected, with an RSSI.
  /// `connectTime`: `Device1.Connect` is answered after this long, as
  /// bluetoothd answers once the link is up (or its own limit has passed).
  /// `stalledLinks`: the first so many `Connect`s bring the link up
  /// (`Connected`) but never resolve the services, and are answered with an
  /// error only when `Disconnect` ends the link; later ones resolve them.
  /// `stalledLinksAnswered`: those `Connect`s are answered once the link is
  /// up, the services still never resolved.
  /// `alsoHeard`: more devices (address, address type) heard advertising
  /// once discovery starts.
  /// `notificationsHeld`: the characteristic's notifications are held for
  /// another session, as bluetoothd holds one an earlier link left behind:
  /// `AcquireNotify` and `StartNotify` answer "Notify acquired" until
  /// `StopNotify` ends it (as bluetoothd does; not with
  /// `stopNotifyEndsHeld: false`) or the device is removed (`RemoveDevice`).
  static func start(
    on privateBus: PrivateBus, peripheralKnown: Bool = true, connectTime: Duration = .zero, stalledLinks: Int = 0,
    stalledLinksAnswered: Bool = false, alsoHeard: [(address: String, type: String)] = [],
    notificationsHeld: Bool = false, stopNotifyEndsHeld: Bool = true
  ) async throws -> BluetoothdCentralStandIn {
    let bus = try await privateBus.connect()
    try await bus.requestName(BlueZ.service)
    await bus.exportObjectManager(at: .root)
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else {
      throw DBusError(name: DBusError.Name.failed, message: "socketpair failed: errno \(errno)")
    }
    let central = pair[1]
    let adapterPath = try ObjectPath("/org/bluez/hci0")
    let devicePath = try adapterPath.appending("dev_" + peripheralAddress.split(separator: ":").joined(separator: "_"))
    let calls = MethodCallLog()
    let held = notificationsHeld
    let exportPeripheral = { @Sendable () async throws in
      try await Self.exportPeripheral(
        at: devicePath, connected: peripheralKnown && stalledLinks == 0, connectTime: connectTime,
        stalledLinks: stalledLinks, stalledLinksAnswered: stalledLinksAnswered, notifying: central,
        held: {
          held && calls.count("RemoveDevice") == 0 && !(stopNotifyEndsHeld && calls.count("StopNotify") > 0)
        }, calls: calls, on: bus)
    }
    let exportOthers = { @Sendable () async throws in
      for (address, type) in alsoHeard {
        try await bus.export(
          adapterPath.appending("dev_" + address.split(separator: ":").joined(separator: "_")),
          interfaces: [
            DBusInterface(
              name: BlueZ.deviceInterface,
              properties: [
                DBusProperty(name: "Address", value: .string(address)),
                DBusProperty(name: "AddressType", value: .string(type)),
                DBusProperty(name: "Connected", value: .boolean(false)),
                DBusProperty(name: "UUIDs", value: .strings([service])),
                DBusProperty(name: "RSSI", value: .int16(-50)),
              ])
          ])
      }
    }
    try await bus.export(
      adapterPath,
      interfaces: [
        DBusInterface(
          name: BlueZ.adapterInterface,
          methods: [
            try DBusMethod(name: "SetDiscoveryFilter", input: "a{sv}") { _ in [] },
            try DBusMethod(name: "StartDiscovery") { _ in
              calls.append("StartDiscovery")
              if calls.count("StartDiscovery") == 1 {
                Task {
                  try await exportOthers()
                  if !peripheralKnown { try await exportPeripheral() }
                }
              }
              return []
            },
            try DBusMethod(name: "StopDiscovery") { _ in
              calls.append("StopDiscovery")
              return []
            },
            try DBusMethod(name: "RemoveDevice", input: "o") { _ in
              calls.append("RemoveDevice")
              return []
            },
          ],
          properties: [
            DBusProperty(name: "Address", value: .string("00:AA:01:01:00:01")),
            DBusProperty(name: "Powered", value: .boolean(true)),
          ])
      ])
    let adapter = try await BluetoothAdapter.find("hci0", on: bus)
    if peripheralKnown { try await exportPeripheral() }
    return BluetoothdCentralStandIn(
      bus: bus, adapter: adapter, devicePath: devicePath, ends: SocketEnds(bluetoothd: pair[0], central: central),
      calls: calls)
  }

  /// Exports the peripheral at `path` with its service and characteristic
  /// (which hands out `notifying` on `AcquireNotify`, unless `held()`).
  private static func exportPeripheral(
    at devicePath: ObjectPath, connected: Bool, connectTime: Duration, stalledLinks: Int, stalledLinksAnswered: Bool,
    notifying central: Int32, held: @escaping @Sendable () -> Bool, calls: MethodCallLog, on bus: DBusConnection
  ) async throws {
    let servicePath = try devicePath.appending("service0001")
    try await bus.export(
      devicePath,
      interfaces: [
        DBusInterface(
          name: BlueZ.deviceInterface,
          methods: [
            try DBusMethod(name: "Connect") { _ in
              calls.append("Connect")
              if connectTime > .zero { try await Task.sleep(for: connectTime) }
              guard stalledLinks > 0 else { return [] }
              if calls.count("Connect") <= stalledLinks {
                // The link is up; nothing more happens until it is ended.
                let ended = calls.count("Disconnect") + 1
                try await bus.updateProperties(
                  at: devicePath, interface: BlueZ.deviceInterface, ["Connected": .boolean(true)])
                if stalledLinksAnswered { return [] }
                while calls.count("Disconnect") < ended { try await Task.sleep(for: .milliseconds(20)) }
                throw DBusError(name: "org.bluez.Error.Failed", message: "Software caused connection abort")
              }
              // The link first; its services a moment after the answer, as bluetoothd resolves them.
              try await bus.updateProperties(
                at: devicePath, interface: BlueZ.deviceInterface, ["Connected": .boolean(true)])
              Task {
                try await Task.sleep(for: .milliseconds(200))
                try await bus.updateProperties(
                  at: devicePath, interface: BlueZ.deviceInterface, ["ServicesResolved": .boolean(true)])
              }
              return []
            },
            try DBusMethod(name: "Disconnect") { _ in
              calls.append("Disconnect")
              if stalledLinks > 0 {
                try await bus.updateProperties(
                  at: devicePath, interface: BlueZ.deviceInterface,
                  ["Connected": .boolean(false), "ServicesResolved": .boolean(false)])
              }
              return []
            },
          ],
          properties: [
            DBusProperty(name: "Address", value: .string(peripheralAddress)),
            DBusProperty(name: "AddressType", value: .string("public")),
            DBusProperty(name: "Connected", value: .boolean(connected)),
            // Resolved from the start, so a connect need not wait for it;
            // with stalled links, once a link is up and not stalled.
            DBusProperty(name: "ServicesResolved", value: .boolean(stalledLinks == 0)),
          ] + (connected ? [] : [DBusProperty(name: "RSSI", value: .int16(-60))]))
      ])
    try await bus.export(
      servicePath,
      interfaces: [
        DBusInterface(
          name: BlueZ.gattServiceInterface,
          properties: [
            DBusProperty(name: "UUID", value: .string(service)),
            DBusProperty(name: "Primary", value: .boolean(true)),
          ])
      ])
    try await bus.export(
      servicePath.appending("char0002"),
      interfaces: [
        DBusInterface(
          name: BlueZ.gattCharacteristicInterface,
          methods: [
            try DBusMethod(name: "AcquireNotify", input: "a{sv}", output: "hq") { _ in
              calls.append("AcquireNotify")
              if held() { throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired") }
              return [.unixFD(central), .uint16(247)]
            },
            try DBusMethod(name: "StartNotify") { _ in
              calls.append("StartNotify")
              if held() { throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired") }
              throw DBusError(name: "org.bluez.Error.NotSupported", message: "the stand-in notifies on sockets only")
            },
            try DBusMethod(name: "StopNotify") { _ in
              calls.append("StopNotify")
              return []
            },
          ],
          properties: [
            DBusProperty(name: "UUID", value: .string(characteristic)),
            DBusProperty(name: "Service", value: .objectPath(servicePath)),
            DBusProperty(name: "Flags", value: .strings(["notify"])),
          ])
      ])
  }

  func close() {
    ends.close(ends.bluetoothd)
    ends.close(ends.central)
  }
}
