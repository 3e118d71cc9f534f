import BlueZ
import DBus
import DBusTestSupport
import Glibc
import Synchronization

/// A stand-in for bluetoothd's central side on a private bus: adapter
/// `hci0` (discovery finds nothing new on air), one connected peripheral
/// with one notifying characteristic whose `AcquireNotify` hands out one end
/// of a socket pair, and which logs its `Disconnect` calls.
struct BluetoothdCentralStandIn {
  static let peripheralAddress = "00:AA:01:00:00:02"
  static let service = "d0e20031-0000-4000-8000-00000000c0de"
  static let characteristic = "d0e20032-0000-4000-8000-00000000c0de"

  let bus: DBusConnection
  let adapter: BluetoothAdapter
  let devicePath: ObjectPath
  let ends: SocketEnds
  /// The device's methods a central called (`Disconnect`).
  let deviceCalls: MethodCallLog

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

  static func start(on privateBus: PrivateBus) async throws -> BluetoothdCentralStandIn {
    let bus = try await privateBus.connect()
    try await bus.requestName(BlueZ.service)
    await bus.exportObjectManager(at: .root)
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else {
      throw DBusError(name: DBusError.Name.failed, message: "socketpair failed: errno \(errno)")
    }
    let central = pair[1]
    let adapterPath = try ObjectPath("/org/bluez/hci0")
    try await bus.export(
      adapterPath,
      interfaces: [
        DBusInterface(
          name: BlueZ.adapterInterface,
          methods: [
            try DBusMethod(name: "SetDiscoveryFilter", input: "a{sv}") { _ in [] },
            try DBusMethod(name: "StartDiscovery") { _ in [] },
            try DBusMethod(name: "StopDiscovery") { _ in [] },
            try DBusMethod(name: "RemoveDevice", input: "o") { _ in [] },
          ],
          properties: [
            DBusProperty(name: "Address", value: .string("00:AA:01:01:00:01")),
            DBusProperty(name: "Powered", value: .boolean(true)),
          ])
      ])
    let adapter = try await BluetoothAdapter.find("hci0", on: bus)
    let devicePath = try adapter.devicePath(for: peripheralAddress)
    let deviceCalls = MethodCallLog()
    let servicePath = try devicePath.appending("service0001")
    try await bus.export(
      devicePath,
      interfaces: [
        DBusInterface(
          name: BlueZ.deviceInterface,
          methods: [
            try DBusMethod(name: "Connect") { _ in [] },
            try DBusMethod(name: "Disconnect") { _ in
              deviceCalls.append("Disconnect")
              return []
            },
          ],
          properties: [
            DBusProperty(name: "Address", value: .string(peripheralAddress)),
            DBusProperty(name: "Connected", value: .boolean(true)),
            DBusProperty(name: "ServicesResolved", value: .boolean(true)),
          ])
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
              [.unixFD(central), .uint16(247)]
            }
          ],
          properties: [
            DBusProperty(name: "UUID", value: .string(characteristic)),
            DBusProperty(name: "Service", value: .objectPath(servicePath)),
            DBusProperty(name: "Flags", value: .strings(["notify"])),
          ])
      ])
    return BluetoothdCentralStandIn(
      bus: bus, adapter: adapter, devicePath: devicePath, ends: SocketEnds(bluetoothd: pair[0], central: central),
      deviceCalls: deviceCalls)
  }

  func close() {
    ends.close(ends.bluetoothd)
    ends.close(ends.central)
  }
}
