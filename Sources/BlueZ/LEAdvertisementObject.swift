import DBus
import GATT

/// An `org.bluez.LEAdvertisement1` object built from `AdvertisementData`.
///
/// BlueZ lays the fields out itself: with a 128-bit service UUID and a name
/// the legacy 31 bytes are too few, so the local name is left to the scan
/// response (`Includes: local-name` puts it there when the advertisement is
/// full) while the service UUIDs stay in the advertisement, where centrals
/// that filter on them look.
struct LEAdvertisementObject: Sendable {
  let path: ObjectPath
  let data: AdvertisementData

  func properties() -> [DBusProperty] {
    var properties: [DBusProperty] = []
    func add(_ name: String, _ value: DBusValue) {
      if let property = try? DBusProperty(name: name, value: value) { properties.append(property) }
    }
    add("Type", .string("peripheral"))
    if !data.serviceUUIDs.isEmpty { add("ServiceUUIDs", .strings(data.serviceUUIDs.map(\.uuidString))) }
    if let name = data.localName { add("LocalName", .string(name)) }
    if !data.manufacturerData.isEmpty {
      add(
        "ManufacturerData",
        .dictionary(
          key: .uint16, value: .variant,
          data.manufacturerData.sorted { $0.key < $1.key }.map {
            DBusDictionaryEntry(.uint16($0.key), .variant(.bytes($0.value)))
          }))
    }
    if !data.serviceData.isEmpty {
      add(
        "ServiceData",
        .dictionary(
          key: .string, value: .variant,
          data.serviceData.sorted { $0.key < $1.key }.map {
            DBusDictionaryEntry(.string($0.key.uuidString), .variant(.bytes($0.value)))
          }))
    }
    if let appearance = data.appearance { add("Appearance", .uint16(appearance)) }
    if data.txPowerLevel != nil { add("Includes", .strings(["tx-power"])) }
    return properties
  }

  func export(on bus: DBusConnection, onRelease: @escaping DBusMethodHandler) async throws {
    try await bus.export(
      path,
      interfaces: [
        DBusInterface(
          name: BlueZ.advertisementInterface,
          methods: [DBusMethod(name: "Release", handler: onRelease)],
          properties: properties())
      ])
  }
}
