import DBus
import GATT

/// A local Bluetooth controller as BlueZ presents it (`/org/bluez/hci0`).
public struct BluetoothAdapter: Sendable, Hashable, CustomStringConvertible {
  /// The object path, e.g. `/org/bluez/hci0`.
  public let path: ObjectPath
  /// The address, e.g. `00:AA:01:00:00:00`.
  public let address: String
  public let isPowered: Bool

  /// The controller's name, e.g. `hci0`.
  public var name: String { String(path.lastElement) }
  public var description: String { "\(name) (\(address))" }

  /// Every adapter BlueZ knows, sorted by name.
  public static func all(on bus: DBusConnection) async throws -> [BluetoothAdapter] {
    let objects = try await DBusRemoteObject(connection: bus, destination: BlueZ.service, path: BlueZ.root)
      .managedObjects()
    return objects.compactMap { path, interfaces in
      guard let adapter = interfaces[BlueZ.adapterInterface] else { return nil }
      return BluetoothAdapter(
        path: path, address: adapter["Address"]?.string ?? "", isPowered: adapter["Powered"]?.bool ?? false)
    }.sorted { $0.path < $1.path }
  }

  /// Finds an adapter by name (`hci1`) or address; `nil` selects the first.
  /// The error lists the adapters there are.
  public static func find(_ selector: String?, on bus: DBusConnection) async throws -> BluetoothAdapter {
    let adapters: [BluetoothAdapter]
    do {
      adapters = try await all(on: bus)
    } catch let error as DBusError where error.name == DBusError.Name.serviceUnknown {
      throw GATTError(.notFound, "BlueZ (org.bluez) is not running on the \(bus.address) bus")
    }
    let match = adapters.first {
      selector == nil || $0.name == selector || $0.address.caseInsensitiveCompare(selector ?? "") == .orderedSame
    }
    guard let match else {
      let known = adapters.isEmpty ? "none" : adapters.map(\.description).joined(separator: ", ")
      throw GATTError(.notFound, "no Bluetooth adapter \(selector ?? "") (adapters: \(known))")
    }
    return match
  }

  /// Powers the adapter on (no-op when it is on).
  public func powerOn(on bus: DBusConnection) async throws {
    let adapter = try DBusRemoteObject(connection: bus, destination: BlueZ.service, path: path)
    if try await adapter.property(BlueZ.adapterInterface, "Powered").bool != true {
      try await adapter.setProperty(BlueZ.adapterInterface, "Powered", .boolean(true))
    }
  }

  /// The path of the device object for `address` on this adapter.
  public func devicePath(for address: String) throws -> ObjectPath {
    try path.appending(BlueZ.deviceElement(for: address))
  }
}
