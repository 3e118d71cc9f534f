import BlueZ
import DBus
import DBusTestSupport
import Synchronization

/// Just enough of `org.bluez` on a private bus to host a peripheral: one
/// adapter (`/org/bluez/hci0`) taking GATT applications and advertisements,
/// and one connected central. Tests then call the application's methods as
/// bluetoothd would.
struct FakeBlueZ {
  static let centralAddress = "00:AA:01:01:00:01"

  let bus: DBusConnection
  let adapter: BluetoothAdapter
  /// The manager methods called on the adapter, in order (`RegisterApplication`, …),
  /// and `org.bluez.Error.AlreadyExists` after a `RegisterAdvertisement` of one registered already.
  let calls: MethodCallLog

  /// Takes the name `org.bluez` on `privateBus` and exports the adapter and the central.
  /// `stockHandles`: refuse an application that asks for a handle below
  /// 0x0012, as a stock bluetoothd does, whose own GAP and GATT services hold them.
  /// `advertisingNotYet`: the first that many `RegisterAdvertisement` calls
  /// fail with `UnknownMethod`, as on a bluetoothd that has just taken the
  /// name and not yet exported its advertising manager.
  /// `maxAdvertisements`: a `RegisterAdvertisement` beyond this many
  /// registered at once is refused, as bluetoothd refuses one more than the
  /// controller has advertising sets for. An advertisement registered
  /// already (or being registered) is refused with `AlreadyExists`.
  /// `advertisingTime`: `RegisterAdvertisement` is answered after this long,
  /// as bluetoothd answers once it has read the advertisement's properties
  /// and the controller has taken it.
  /// `disconnectTime`: the central answers `Device1.Disconnect` after this
  /// long, as bluetoothd does once the link is down (its DISCONNECT_TIMER is
  /// 2 s); the log shows `Disconnect` when the call came and `Disconnected`
  /// when it was answered. `nil`: the central has no such method.
  /// `centralConnectsAt`: the central is not connected at first, and its
  /// link comes up (`Connected` turns true) while the `RegisterAdvertisement`
  /// call of that number is handled, or `centralConnectsAfter` after it
  /// was answered.
  static func start(
    on privateBus: PrivateBus, stockHandles: Bool = false, advertisingNotYet: Int = 0, maxAdvertisements: Int = 4,
    advertisingTime: Duration = .zero,
    disconnectTime: Duration? = nil, centralConnectsAt: Int? = nil, centralConnectsAfter: Duration = .zero
  ) async throws -> FakeBlueZ {
    let bus = try await privateBus.connect()
    let adapterPath = try ObjectPath("/org/bluez/hci0")
    let centralPath = try adapterPath.appending("dev_00_AA_01_01_00_01")
    try await bus.requestName(BlueZ.service)
    await bus.exportObjectManager(at: .root)
    let calls = MethodCallLog()
    let advertisements = Mutex<Set<String>>([])
    func method(_ name: String, _ input: String) throws -> DBusMethod {
      try DBusMethod(name: name, input: input) { call in
        let path = call.body.first?.objectPath?.rawValue
        calls.append(name, path: path)
        if name == "RegisterAdvertisement", calls.count(name) <= advertisingNotYet {
          throw DBusError(
            name: "org.freedesktop.DBus.Error.UnknownMethod",
            message:
              "Method \"RegisterAdvertisement\" with signature \"oa{sv}\" on interface \"org.bluez.LEAdvertisingManager1\" doesn't exist"
          )
        }
        if name == "RegisterAdvertisement", let path {
          let refusal = advertisements.withLock { registered -> DBusError? in
            if registered.contains(path) {
              return DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")
            }
            guard registered.count < maxAdvertisements else {
              return DBusError(name: "org.bluez.Error.NotPermitted", message: "Maximum advertisements reached")
            }
            registered.insert(path)
            return nil
          }
          if let refusal {
            // A second registration of one advertisement is a mistake of the device's: logged.
            if refusal.name == "org.bluez.Error.AlreadyExists" { calls.append(refusal.name, path: path) }
            throw refusal
          }
          if advertisingTime > .zero { try await Task.sleep(for: advertisingTime) }
          if calls.count(name) == centralConnectsAt {
            Task {
              try await Task.sleep(for: centralConnectsAfter)
              try await bus.updateProperties(
                at: centralPath, interface: BlueZ.deviceInterface, ["Connected": .boolean(true)])
            }
            // Before the answer, unless asked for later.
            if centralConnectsAfter == .zero { try await Task.sleep(for: .milliseconds(20)) }
          }
        }
        if name == "UnregisterAdvertisement", let path {
          guard advertisements.withLock({ $0.remove(path) }) != nil else {
            throw DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")
          }
        }
        if name == "RegisterApplication", stockHandles, let sender = call.sender, let root = call.body.first?.objectPath
        {
          let objects = try await DBusRemoteObject(connection: bus, destination: sender, path: root).managedObjects()
          let handles = objects.values.flatMap { $0.values.compactMap { $0["Handle"]?.int } }
          if handles.contains(where: { $0 < 0x0012 }) {
            throw DBusError(name: "org.bluez.Error.Failed", message: "Failed to create entry in database")
          }
        }
        return []
      }
    }
    try await bus.export(
      adapterPath,
      interfaces: [
        DBusInterface(
          name: BlueZ.adapterInterface,
          properties: [
            DBusProperty(name: "Address", value: .string("00:AA:01:00:00:00")),
            DBusProperty(name: "Powered", value: .boolean(true)),
          ]),
        DBusInterface(
          name: BlueZ.gattManagerInterface,
          methods: [try method("RegisterApplication", "oa{sv}"), try method("UnregisterApplication", "o")]),
        DBusInterface(
          name: BlueZ.advertisingManagerInterface,
          methods: [try method("RegisterAdvertisement", "oa{sv}"), try method("UnregisterAdvertisement", "o")]),
      ])
    try await bus.export(
      centralPath,
      interfaces: [
        DBusInterface(
          name: BlueZ.deviceInterface,
          methods: try disconnectTime.map { time in
            [
              try DBusMethod(name: "Disconnect") { _ in
                calls.append("Disconnect")
                try await Task.sleep(for: time)
                calls.append("Disconnected")
                return []
              }
            ]
          } ?? [],
          properties: [
            DBusProperty(name: "Address", value: .string(centralAddress)),
            DBusProperty(name: "Connected", value: .boolean(centralConnectsAt == nil)),
          ])
      ])
    let adapter = try await BluetoothAdapter.find("hci0", on: bus)
    return FakeBlueZ(bus: bus, adapter: adapter, calls: calls)
  }

  /// Calls `AcquireNotify` on a characteristic as bluetoothd does when a
  /// central subscribes: the central's device, the link's MTU, `LE`.
  func acquireNotify(_ characteristic: ObjectPath, of peripheral: String, mtu: UInt16) async throws
    -> (fd: Int32, mtu: Int)
  {
    let object = try DBusRemoteObject(connection: bus, destination: peripheral, path: characteristic)
    let central = try adapter.devicePath(for: Self.centralAddress)
    let reply = try await object.call(
      BlueZ.gattCharacteristicInterface, "AcquireNotify",
      [.properties(["device": .objectPath(central), "mtu": .uint16(mtu), "link": .string("LE")])])
    guard case .unixFD(let fd)? = reply.first, let mtu = reply.last?.int else {
      throw DBusError(name: DBusError.Name.failed, message: "AcquireNotify returned \(reply)")
    }
    return (fd, mtu)
  }

}
