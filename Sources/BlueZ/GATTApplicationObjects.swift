import DBus
import GATT

/// The D-Bus objects of one GATT application (BlueZ's `GattManager1`
/// layout): a root with an object manager, `service<i>` below it,
/// `char<j>` below each service, `desc<k>` below each characteristic.
struct GATTApplicationObjects: Sendable {
  let root: ObjectPath
  /// Each characteristic's object path, by address.
  let characteristicPaths: [CharacteristicAddress: ObjectPath]
  /// Each service's object path and its characteristic paths, in profile order.
  let layout:
    [(service: ObjectPath, definition: ServiceDefinition, characteristics: [(ObjectPath, CharacteristicDefinition)])]

  init(root: ObjectPath, profile: GATTProfile) throws {
    self.root = root
    var paths: [CharacteristicAddress: ObjectPath] = [:]
    var layout: [(ObjectPath, ServiceDefinition, [(ObjectPath, CharacteristicDefinition)])] = []
    for (i, service) in profile.services.enumerated() {
      let servicePath = try root.appending("service\(i)")
      var characteristics: [(ObjectPath, CharacteristicDefinition)] = []
      for (j, characteristic) in service.characteristics.enumerated() {
        let path = try servicePath.appending("char\(j)")
        paths[CharacteristicAddress(service: service.uuid, characteristic: characteristic.uuid)] = path
        characteristics.append((path, characteristic))
      }
      layout.append((servicePath, service, characteristics))
    }
    self.characteristicPaths = paths
    self.layout = layout
  }

  /// Characteristic methods, by the characteristic's address.
  struct CharacteristicMethods: Sendable {
    var read: DBusOrderedMethodHandler
    var write: DBusOrderedMethodHandler
    var startNotify: DBusOrderedMethodHandler
    var stopNotify: DBusOrderedMethodHandler
    var confirm: DBusMethodHandler
  }

  /// Exports every object (object manager first, so BlueZ sees them all).
  func export(on bus: DBusConnection, methods: @Sendable (CharacteristicAddress) -> CharacteristicMethods) async throws
  {
    await bus.exportObjectManager(at: root)
    for (servicePath, service, characteristics) in layout {
      try await bus.export(
        servicePath,
        interfaces: [
          DBusInterface(
            name: BlueZ.gattServiceInterface,
            properties: [
              DBusProperty(name: "UUID", value: .string(service.uuid.uuidString)),
              DBusProperty(name: "Primary", value: .boolean(service.isPrimary)),
            ])
        ])
      for (path, characteristic) in characteristics {
        let address = CharacteristicAddress(service: service.uuid, characteristic: characteristic.uuid)
        let handlers = methods(address)
        try await bus.export(
          path,
          interfaces: [
            DBusInterface(
              name: BlueZ.gattCharacteristicInterface,
              methods: [
                DBusMethod(name: "ReadValue", input: "a{sv}", output: "ay", ordered: handlers.read),
                DBusMethod(name: "WriteValue", input: "aya{sv}", ordered: handlers.write),
                DBusMethod(name: "StartNotify", ordered: handlers.startNotify),
                DBusMethod(name: "StopNotify", ordered: handlers.stopNotify),
                DBusMethod(name: "Confirm", handler: handlers.confirm),
              ],
              properties: [
                DBusProperty(name: "UUID", value: .string(characteristic.uuid.uuidString)),
                DBusProperty(name: "Service", value: .objectPath(servicePath)),
                DBusProperty(name: "Flags", value: .strings(characteristic.properties.bluezFlags)),
                DBusProperty(name: "Value", value: .bytes(characteristic.initialValue ?? []), emitsChanged: true),
                DBusProperty(name: "Notifying", value: .boolean(false)),
              ])
          ])
        for (k, descriptor) in characteristic.descriptors.enumerated()
        where descriptor.uuid != .clientCharacteristicConfiguration {
          // BlueZ adds the CCCD itself for notify/indicate characteristics.
          let value = descriptor.value
          try await bus.export(
            try path.appending("desc\(k)"),
            interfaces: [
              DBusInterface(
                name: BlueZ.gattDescriptorInterface,
                methods: [
                  DBusMethod(name: "ReadValue", input: "a{sv}", output: "ay") { call in
                    let offset = call.body[0].dictionary?["offset"]?.int ?? 0
                    guard offset <= value.count else { throw BlueZError.serverReply(for: .invalidOffset) }
                    return [.bytes(Array(value[offset...]))]
                  },
                  DBusMethod(name: "WriteValue", input: "aya{sv}") { _ in
                    throw BlueZError.serverReply(for: .writeNotPermitted)
                  },
                ],
                properties: [
                  DBusProperty(name: "UUID", value: .string(descriptor.uuid.uuidString)),
                  DBusProperty(name: "Characteristic", value: .objectPath(path)),
                  DBusProperty(name: "Flags", value: .strings(descriptor.permissions.bluezFlags)),
                ])
            ])
        }
      }
    }
  }

  /// Removes every object.
  func unexport(on bus: DBusConnection) async {
    for (servicePath, _, characteristics) in layout.reversed() {
      for (path, characteristic) in characteristics.reversed() {
        for k in characteristic.descriptors.indices.reversed() {
          if let descriptor = try? path.appending("desc\(k)") { try? await bus.unexport(descriptor) }
        }
        try? await bus.unexport(path)
      }
      try? await bus.unexport(servicePath)
    }
  }
}
