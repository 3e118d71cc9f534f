import GATT

/// A peripheral's GATT database as a `generic` device's profile: every
/// service and characteristic found (in a capture's discovery responses, or
/// by `doppel record` on a live link), with the value read of each, and a
/// key per characteristic for the recording and the scenario. Handles a
/// capture uses but never shows discovered get a service of their own.
struct ImportedProfile {
  struct Entry {
    var uuid: BluetoothUUID
    var key: String
    var properties: CharacteristicProperties
    var value: [UInt8]?
    var descriptors: [(uuid: BluetoothUUID, value: [UInt8])]
  }

  /// A service as the peripheral showed it, before it is declared.
  struct FoundService {
    var uuid: BluetoothUUID
    /// Where it is, for a note: `at handle 0x000c`, `number 2`.
    var place: String
    var characteristics: [FoundCharacteristic]
  }

  /// A characteristic as the peripheral showed it, with the value read
  /// (`nil`: none, or it could not be read).
  struct FoundCharacteristic {
    var uuid: BluetoothUUID
    var properties: CharacteristicProperties
    var value: [UInt8]?
    var descriptors: [(uuid: BluetoothUUID, value: [UInt8])]
    /// Sets its key apart from another's of the same name (its value handle in hex, its position).
    var tag: String
  }

  /// The services bluetoothd publishes itself on every device: not declared.
  static let stackServices: Set<BluetoothUUID> = [BluetoothUUID(0x1800), BluetoothUUID(0x1801)]
  /// Properties a hosted characteristic does not take from a profile.
  static let dropped: CharacteristicProperties = [.broadcast, .extendedProperties, .authenticatedSignedWrites]
  /// Not declared: services, includes, characteristic declarations and the CCCD.
  static let notDescriptors: Set<BluetoothUUID> = [
    BluetoothUUID(0x2800), BluetoothUUID(0x2801), BluetoothUUID(0x2802), BluetoothUUID(0x2803),
    .clientCharacteristicConfiguration,
  ]
  /// Where undiscovered handles go.
  static let undiscoveredService: BluetoothUUID = "d0a1e000-0000-4000-8000-000000000000"

  var services: [(uuid: BluetoothUUID, entries: [Entry])] = []
  /// The handles of the GAP and GATT services discovery showed: what a
  /// central's stack does there (Service Changed's CCCD, Client Supported
  /// Features) the replaying central's stack does by itself.
  private(set) var stackHandles: [ClosedRange<UInt16>] = []
  private var keys: [UInt16: String] = [:]
  private var used: Set<String> = []

  /// An empty profile, to `declare` services into.
  init() {}

  /// Declares `found`, in the peripheral's order: not bluetoothd's own
  /// services, and of a UUID that appears more than once (in the lab,
  /// bluetoothd publishes a Device Information service beside the device's)
  /// only the one with the most characteristics, the later of equals
  /// (bluetoothd publishes its own before any application's). Returns, for
  /// each service found, its characteristics' keys in order, or `nil` when
  /// it is not declared.
  mutating func declare(_ found: [FoundService], notes: inout [String]) -> [[String]?] {
    var chosen: [BluetoothUUID: Int] = [:]
    for (index, service) in found.enumerated()
    where chosen[service.uuid].map({ found[$0].characteristics.count <= service.characteristics.count }) ?? true {
      chosen[service.uuid] = index
    }
    var dropped = false
    var keys: [[String]?] = []
    for (index, service) in found.enumerated() {
      guard !Self.stackServices.contains(service.uuid), let winner = chosen[service.uuid], winner == index else {
        if let winner = chosen[service.uuid], !Self.stackServices.contains(service.uuid) {
          notes.append(
            "service \(Self.uuid(service.uuid)) appears more than once; the one \(found[winner].place) (the most"
              + " characteristics) is declared, not the one \(service.place)")
        }
        keys.append(nil)
        continue
      }
      var entries: [Entry] = []
      for characteristic in service.characteristics {
        if !characteristic.properties.intersection(Self.dropped).isEmpty { dropped = true }
        let base =
          Self.knownNames[characteristic.uuid]
          ?? (characteristic.uuid.alias16.map { hex16($0) } ?? String(characteristic.uuid.uuidString.prefix(8)))
        let key = used.contains(base) ? "\(base)-\(characteristic.tag)" : base
        used.insert(key)
        entries.append(
          Entry(
            uuid: characteristic.uuid, key: key, properties: characteristic.properties.subtracting(Self.dropped),
            value: characteristic.properties.contains(.read) ? characteristic.value : nil,
            descriptors: characteristic.descriptors.filter { !Self.notDescriptors.contains($0.uuid) }))
      }
      keys.append(entries.map(\.key))
      if !entries.isEmpty { services.append((service.uuid, entries)) }
    }
    if dropped {
      notes.append(
        "broadcast, extended-properties and authenticated-signed-writes are not declared (bluetoothd serves them)")
    }
    return keys
  }

  /// The database a capture's discovery showed, and a service of its own for
  /// the handles `connection` uses that discovery never showed.
  init(database: CapturedDatabase, connection: CapturedConnection, notes: inout [String]) {
    let sorted = database.services.values.sorted { $0.start < $1.start }
    var found: [FoundService] = []
    var valueHandles: [[UInt16]] = []
    for service in sorted {
      let characteristics = database.characteristics.values.filter {
        service.start <= $0.declaration && $0.declaration <= service.end
      }.sorted { $0.declaration < $1.declaration }
      var entries: [FoundCharacteristic] = []
      for (index, characteristic) in characteristics.enumerated() {
        let end = index + 1 < characteristics.count ? Int(characteristics[index + 1].declaration) : Int(service.end) + 1
        let descriptors = database.descriptors.filter { $0.key > characteristic.valueHandle && Int($0.key) < end }
          .sorted { $0.key < $1.key }.map { (uuid: $0.value, value: database.values[$0.key] ?? []) }
        entries.append(
          FoundCharacteristic(
            uuid: characteristic.uuid, properties: characteristic.properties,
            value: database.values[characteristic.valueHandle], descriptors: descriptors,
            tag: hex16(characteristic.valueHandle)))
      }
      found.append(
        FoundService(uuid: service.uuid, place: "at handle 0x" + hex16(service.start), characteristics: entries))
      valueHandles.append(characteristics.map(\.valueHandle))
    }
    for (handles, declared) in zip(valueHandles, declare(found, notes: &notes)) {
      for (handle, key) in zip(handles, declared ?? []) { keys[handle] = key }
    }
    stackHandles = sorted.filter { Self.stackServices.contains($0.uuid) && $0.start <= $0.end }.map {
      $0.start...$0.end
    }
    // Handles the connection uses that discovery never showed.
    var undiscovered: [UInt16: CharacteristicProperties] = [:]
    for (_, event) in connection.events where !isStackHandle(event.handle) {
      switch event {
      case .notification(let handle, _) where keys[handle] == nil: undiscovered[handle, default: []].insert(.notify)
      case .indication(let handle, _) where keys[handle] == nil: undiscovered[handle, default: []].insert(.indicate)
      case .write(let handle, _, let withResponse, _) where keys[handle] == nil:
        undiscovered[handle, default: []].insert(withResponse ? .write : .writeWithoutResponse)
      case .subscription(let handle, _) where keys[handle] == nil: undiscovered[handle, default: []].insert(.notify)
      default: break
      }
    }
    if !undiscovered.isEmpty {
      let handles = undiscovered.keys.sorted()
      notes.append(
        "the capture never shows the discovery of handle\(handles.count == 1 ? "" : "s") "
          + handles.map { "0x" + hex16($0) }.joined(separator: ", ")
          + " (the central had the database cached): they are declared in a service of their own,"
          + " with UUIDs made from their handles")
      var entries: [Entry] = []
      for handle in handles {
        let uuid = BluetoothUUID(
          high: Self.undiscoveredService.high, low: Self.undiscoveredService.low | UInt64(handle))
        let key = "handle-" + hex16(handle)
        keys[handle] = key
        entries.append(
          Entry(
            uuid: uuid, key: key, properties: undiscovered[handle] ?? [.notify], value: nil,
            descriptors: []))
      }
      services.append((Self.undiscoveredService, entries))
    }
  }

  /// Whether `handle` is in bluetoothd's own GAP or GATT service.
  func isStackHandle(_ handle: UInt16) -> Bool { stackHandles.contains { $0.contains(handle) } }

  /// The key of the characteristic whose value is at `handle`.
  func key(_ handle: UInt16) -> String { keys[handle] ?? "handle-" + hex16(handle) }

  /// The profile file's text, without `replay` and `responses`.
  func yaml(advertisement: AdvertisementData) -> String {
    var text = "advertising:\n"
    if let name = advertisement.localName {
      // At most 29 bytes, whole characters.
      var short = ""
      for character in name {
        guard short.utf8.count + character.utf8.count <= 29 else { break }
        short.append(character)
      }
      text += "  name: \(ImportedScenario.quoted(short))\n"
    }
    if !advertisement.serviceUUIDs.isEmpty {
      text += "  services: [" + advertisement.serviceUUIDs.map(Self.uuid).joined(separator: ", ") + "]\n"
    }
    if !advertisement.manufacturerData.isEmpty {
      text += "  manufacturer-data:\n"
      for (company, data) in advertisement.manufacturerData.sorted(by: { $0.key < $1.key }) {
        text += "    - {company: \(company), data: \"\(ImportedScenario.hex(data))\"}\n"
      }
    }
    if !advertisement.serviceData.isEmpty {
      text += "  service-data:\n"
      for (uuid, data) in advertisement.serviceData.sorted(by: { $0.key < $1.key }) {
        text += "    - {uuid: \(Self.uuid(uuid)), data: \"\(ImportedScenario.hex(data))\"}\n"
      }
    }
    if let appearance = advertisement.appearance { text += "  appearance: \(appearance)\n" }
    if let power = advertisement.txPowerLevel { text += "  tx-power: \(power)\n" }
    text += "services:\n"
    for service in services {
      text += "  - uuid: \(Self.uuid(service.uuid))\n    characteristics:\n"
      for entry in service.entries {
        text += "      - uuid: \(Self.uuid(entry.uuid))\n"
        text += "        name: \(entry.key)\n"
        text += "        properties: [\(entry.properties.bluezFlags.joined(separator: ", "))]\n"
        if let value = entry.value { text += "        value: \"\(ImportedScenario.hex(value))\"\n" }
        if !entry.descriptors.isEmpty {
          text += "        descriptors:\n"
          for descriptor in entry.descriptors {
            text +=
              "          - {uuid: \(Self.uuid(descriptor.uuid)), value: \"\(ImportedScenario.hex(descriptor.value))\"}\n"
          }
        }
      }
    }
    return text
  }

  static func uuid(_ uuid: BluetoothUUID) -> String { uuid.alias16.map { hex16($0) } ?? uuid.uuidString }

  /// Names of common SIG characteristics, as keys.
  static let knownNames: [BluetoothUUID: String] = [
    BluetoothUUID(0x2A19): "battery-level", BluetoothUUID(0x2A29): "manufacturer-name",
    BluetoothUUID(0x2A24): "model-number", BluetoothUUID(0x2A25): "serial-number",
    BluetoothUUID(0x2A26): "firmware-revision", BluetoothUUID(0x2A27): "hardware-revision",
    BluetoothUUID(0x2A28): "software-revision", BluetoothUUID(0x2A23): "system-id", BluetoothUUID(0x2A50): "pnp-id",
    BluetoothUUID(0x2A37): "heart-rate-measurement", BluetoothUUID(0x2A38): "body-sensor-location",
  ]
}
