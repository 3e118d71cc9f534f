import DBus
import GATT

/// The D-Bus objects of one GATT application (BlueZ's `GattManager1`
/// layout): a root with an object manager, `service<i>` below it,
/// `char<j>` below each service, `desc<k>` below each characteristic. The
/// indices have four digits, so that the object manager's sorted paths, the
/// order in which bluetoothd adds the attributes, are the profile's order.
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
      let servicePath = try root.appending("service" + Self.index(i))
      var characteristics: [(ObjectPath, CharacteristicDefinition)] = []
      for (j, characteristic) in service.characteristics.enumerated() {
        let path = try servicePath.appending("char" + Self.index(j))
        paths[CharacteristicAddress(service: service.uuid, characteristic: characteristic.uuid)] = path
        characteristics.append((path, characteristic))
      }
      layout.append((servicePath, service, characteristics))
    }
    self.characteristicPaths = paths
    self.layout = layout
  }

  /// `7` as `0007`.
  private static func index(_ i: Int) -> String {
    let digits = String(i)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }

  /// BlueZ's `Handle` property, for a fixed handle: bluetoothd places the
  /// attribute there. It writes the property back only when it is 0 (a
  /// handle for it to choose), which a profile never asks for, so it is
  /// read-only and no one else may change it either.
  private static func handleProperty(_ handle: UInt16?) throws -> [DBusProperty] {
    guard let handle else { return [] }
    return [try DBusProperty(name: "Handle", value: .uint16(handle))]
  }

  /// Characteristic methods, by the characteristic's address.
  struct CharacteristicMethods: Sendable {
    var read: DBusOrderedMethodHandler
    var write: DBusOrderedMethodHandler
    var startNotify: DBusOrderedMethodHandler
    var stopNotify: DBusOrderedMethodHandler
    var confirm: DBusMethodHandler
    /// `AcquireNotify(a{sv}) -> (h, q)`, exported with the `NotifyAcquired`
    /// property on characteristics that notify; `nil` exports neither.
    var acquireNotify: DBusOrderedMethodHandler?
  }

  /// Whether the profile fixes any handle.
  var hasFixedHandles: Bool {
    layout.contains { $0.definition.handle != nil || $0.characteristics.contains { $0.1.handle != nil } }
  }

  /// Exports every object (object manager first, so BlueZ sees them all),
  /// with the profile's fixed handles unless `fixedHandles` is false.
  func export(
    on bus: DBusConnection, fixedHandles: Bool = true,
    methods: @Sendable (CharacteristicAddress) -> CharacteristicMethods
  ) async throws {
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
            ] + (try Self.handleProperty(fixedHandles ? service.handle : nil)))
        ])
      for (path, characteristic) in characteristics {
        let address = CharacteristicAddress(service: service.uuid, characteristic: characteristic.uuid)
        let handlers = methods(address)
        var methods = [
          try DBusMethod(name: "ReadValue", input: "a{sv}", output: "ay", ordered: handlers.read),
          try DBusMethod(name: "WriteValue", input: "aya{sv}", ordered: handlers.write),
          try DBusMethod(name: "StartNotify", ordered: handlers.startNotify),
          try DBusMethod(name: "StopNotify", ordered: handlers.stopNotify),
          try DBusMethod(name: "Confirm", handler: handlers.confirm),
        ]
        var properties = [
          try DBusProperty(name: "UUID", value: .string(characteristic.uuid.uuidString)),
          try DBusProperty(name: "Service", value: .objectPath(servicePath)),
          try DBusProperty(name: "Flags", value: .strings(characteristic.properties.bluezFlags)),
          try DBusProperty(name: "Value", value: .bytes(characteristic.initialValue ?? []), emitsChanged: true),
          try DBusProperty(name: "Notifying", value: .boolean(false)),
        ]
        properties += try Self.handleProperty(fixedHandles ? characteristic.handle : nil)
        // BlueZ calls AcquireNotify instead of StartNotify when the property exists.
        if let acquireNotify = handlers.acquireNotify, characteristic.properties.contains(.notify) {
          methods.append(try DBusMethod(name: "AcquireNotify", input: "a{sv}", output: "hq", ordered: acquireNotify))
          properties.append(try DBusProperty(name: "NotifyAcquired", value: .boolean(false)))
        }
        try await bus.export(
          path,
          interfaces: [DBusInterface(name: BlueZ.gattCharacteristicInterface, methods: methods, properties: properties)]
        )
        for (k, descriptor) in characteristic.descriptors.enumerated()
        where descriptor.uuid != .clientCharacteristicConfiguration {
          // BlueZ adds the CCCD itself for notify/indicate characteristics.
          let value = descriptor.value
          try await bus.export(
            try path.appending("desc" + Self.index(k)),
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
          if let descriptor = try? path.appending("desc" + Self.index(k)) { try? await bus.unexport(descriptor) }
        }
        try? await bus.unexport(path)
      }
      try? await bus.unexport(servicePath)
    }
  }
}
