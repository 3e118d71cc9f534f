import Foundation
import GATT
import Yams

/// Reads a `generic` device's `profile:` — a mapping in the scenario, or the
/// path of a profile file (relative to the file that names it) holding the
/// same mapping — into a `ProfileDeclaration`, recording every problem with
/// the file, line and column it is at (the profile file's own for a problem
/// in it, the recording's for a problem in a recording).
struct ProfileReader {
  let document: ScenarioDocument

  static let keys = ["advertising", "services", "replay", "responses"]
  static let serviceKeys = ["uuid", "name", "primary", "characteristics"]
  static let characteristicKeys = ["uuid", "name", "properties", "value", "text", "max-length", "descriptors"]
  static let descriptorKeys = ["uuid", "value", "text", "writable"]
  static let advertisingKeys = ["name", "services", "manufacturer-data", "service-data", "appearance", "tx-power"]
  static let replayKeys = ["file", "from", "loop"]
  static let responseKeys = ["characteristic", "value", "pattern", "reply", "error"]
  static let replyKeys = ["characteristic", "value", "delay"]
  static let anchors = ["hosting", "connected", "subscribed"]
  static let propertyNames = CharacteristicProperties.bluezFlagNames.map(\.flag)

  /// The declaration `node` gives (a mapping, or a profile file's path), or
  /// `nil` with its problems recorded in `document`.
  static func read(_ node: Node, in document: ScenarioDocument) -> ProfileDeclaration? {
    guard case .scalar = node else { return ProfileReader(document: document).read(node) }
    guard let path = document.text(node, "'profile' (a mapping, or the path of a profile file)") else { return nil }
    let resolved = document.resolve(path)
    guard let data = FileManager.default.contents(atPath: resolved) else {
      let reason = FileManager.default.fileExists(atPath: resolved) ? "cannot be read" : "does not exist"
      document.fail(.unreadable, at: node, "the profile file \(resolved) \(reason)")
      return nil
    }
    guard let text = String(data: data, encoding: .utf8) else {
      document.fail(.unreadable, at: node, "the profile file \(resolved) is not UTF-8 text")
      return nil
    }
    let inner = ScenarioDocument(file: resolved)
    defer { document.absorb(inner.errors) }
    do {
      guard let root = try Yams.compose(yaml: text) else {
        inner.fail(.missingKey, at: nil, "the profile file is empty", expected: "a mapping with 'services'")
        return nil
      }
      return ProfileReader(document: inner).read(root)
    } catch {
      inner.absorb([ScenarioParser.syntaxError(error, file: resolved)])
      return nil
    }
  }

  func read(_ node: Node) -> ProfileDeclaration? {
    guard let fields = fields(node, of: "a profile", allowed: Self.keys, required: ["services"]),
      let servicesNode = fields["services"]
    else { return nil }
    let errorsBefore = document.errors.count
    let services = (document.sequence(servicesNode, of: "'services'") ?? []).compactMap(service)
    guard document.errors.count == errorsBefore else { return nil }
    let gatt: GATTProfile
    do {
      gatt = try GATTProfile(services)
    } catch {
      document.fail(.invalidValue, at: servicesNode, "the services do not make a GATT database: \(error.message)")
      return nil
    }
    let keys = gatt.characteristicKeys
    for (index, key) in keys.enumerated() where keys[..<index].contains(key) {
      document.fail(
        .invalidValue, at: servicesNode, "two characteristics have the key '\(key)'",
        suggestion: "give them different names")
      return nil
    }
    var advertisement = AdvertisementData()
    if let node = fields["advertising"] { advertisement = self.advertisement(node) ?? advertisement }
    var declaration = ProfileDeclaration(gatt: gatt, advertisement: advertisement, file: document.file)
    if let node = fields["replay"] {
      declaration.replays = (document.sequence(node, of: "'replay'") ?? []).compactMap { replay($0, gatt: gatt) }
    }
    if let node = fields["responses"] {
      declaration.responses = (document.sequence(node, of: "'responses'") ?? []).compactMap {
        response($0, gatt: gatt)
      }
    }
    return declaration
  }

  // MARK: The database

  private func service(_ node: Node) -> ServiceDefinition? {
    guard let fields = fields(node, of: "a service", allowed: Self.serviceKeys, required: ["uuid", "characteristics"])
    else { return nil }
    // Each part is checked even when another is wrong, so every problem is reported at once.
    let uuid = fields["uuid"].flatMap { self.uuid($0, "a service's 'uuid'") }
    let list = fields["characteristics"].flatMap { document.sequence($0, of: "'characteristics'") } ?? []
    let characteristics = list.compactMap(characteristic)
    guard let uuid, characteristics.count == list.count, fields["characteristics"] != nil else { return nil }
    return ServiceDefinition(
      uuid, name: fields["name"].flatMap { document.text($0, "a service's 'name'") },
      isPrimary: fields["primary"].flatMap { document.flag($0, "'primary'") } ?? true,
      characteristics: characteristics)
  }

  private func characteristic(_ node: Node) -> CharacteristicDefinition? {
    guard
      let fields = fields(
        node, of: "a characteristic", allowed: Self.characteristicKeys, required: ["uuid", "properties"]),
      let uuid = fields["uuid"].flatMap({ self.uuid($0, "a characteristic's 'uuid'") }),
      let propertiesNode = fields["properties"]
    else { return nil }
    var properties: CharacteristicProperties = []
    let items: [Node] =
      if case .scalar = propertiesNode { [propertiesNode] } else {
        document.sequence(propertiesNode, of: "'properties'") ?? []
      }
    for item in items {
      guard
        let flag = document.setting(item, SettingSpec("property", .choice(Self.propertyNames), help: ""), "a property")?
          .text,
        let property = CharacteristicProperties.bluezFlagNames.first(where: { $0.flag == flag })?.property
      else { return nil }
      properties.insert(property)
    }
    guard !properties.isEmpty else {
      document.fail(
        .invalidValue, at: propertiesNode, "a characteristic needs at least one property",
        expected: "some of " + Self.propertyNames.joined(separator: ", "))
      return nil
    }
    guard let value = value(fields, of: "a characteristic") else { return nil }
    var descriptors: [DescriptorDefinition] = []
    if let list = fields["descriptors"].flatMap({ document.sequence($0, of: "'descriptors'") }) {
      for item in list {
        guard let descriptor = descriptor(item) else { return nil }
        descriptors.append(descriptor)
      }
    }
    let maximumLength = fields["max-length"].flatMap {
      document.integer($0, "'max-length'", in: 0...GATTProfile.maximumAttributeLength)
    }
    if fields["max-length"] != nil, maximumLength == nil { return nil }
    return CharacteristicDefinition(
      uuid, name: fields["name"].flatMap { document.text($0, "a characteristic's 'name'") } ?? "",
      properties: properties,
      initialValue: value.isEmpty && fields["value"] == nil && fields["text"] == nil ? nil : value,
      maximumLength: maximumLength, descriptors: descriptors)
  }

  private func descriptor(_ node: Node) -> DescriptorDefinition? {
    guard let fields = fields(node, of: "a descriptor", allowed: Self.descriptorKeys, required: ["uuid"]),
      let uuidNode = fields["uuid"], let uuid = uuid(uuidNode, "a descriptor's 'uuid'"),
      let value = value(fields, of: "a descriptor")
    else { return nil }
    if uuid == .clientCharacteristicConfiguration {
      document.fail(
        .invalidValue, at: uuidNode, "the CCCD (2902) is not declared",
        suggestion: "remove it: the host adds it to every characteristic that notifies or indicates")
      return nil
    }
    let writable = fields["writable"].flatMap { document.flag($0, "'writable'") } ?? false
    return DescriptorDefinition(uuid, value: value, permissions: writable ? [.read, .write] : .read)
  }

  /// `value:` (hex) or `text:` (UTF-8); no bytes when neither is given.
  private func value(_ fields: [String: Node], of what: String) -> [UInt8]? {
    switch (fields["value"], fields["text"]) {
    case (let node?, nil): return hex(node, "\(what)'s 'value'")
    case (nil, let node?): return document.text(node, "\(what)'s 'text'").map { Array($0.utf8) }
    case (nil, nil): return []
    case (_, let node?):
      document.fail(.invalidValue, at: node, "give 'value' (hex) or 'text', not both")
      return nil
    }
  }

  // MARK: Advertising

  private func advertisement(_ node: Node) -> AdvertisementData? {
    guard let fields = fields(node, of: "'advertising'", allowed: Self.advertisingKeys) else { return nil }
    var data = AdvertisementData()
    if let node = fields["name"], let name = document.text(node, "the advertised 'name'") {
      guard name.utf8.count <= 29 else {
        document.fail(
          .invalidValue, at: node, "the advertised name is too long to advertise", expected: "at most 29 bytes",
          found: "\(name.utf8.count) bytes")
        return nil
      }
      data.localName = name
    }
    if let node = fields["services"] {
      let items: [Node] = if case .scalar = node { [node] } else { document.sequence(node, of: "'services'") ?? [] }
      data.serviceUUIDs = items.compactMap { uuid($0, "an advertised service") }
    }
    for item in fields["manufacturer-data"].flatMap({ document.sequence($0, of: "'manufacturer-data'") }) ?? [] {
      guard
        let entry = self.fields(
          item, of: "manufacturer data", allowed: ["company", "data"], required: ["company", "data"]),
        let company = entry["company"].flatMap({ document.integer($0, "'company' (an identifier)", in: 0...0xFFFF) }),
        let bytes = entry["data"].flatMap({ hex($0, "manufacturer 'data'") })
      else { continue }
      data.manufacturerData[UInt16(company)] = bytes
    }
    for item in fields["service-data"].flatMap({ document.sequence($0, of: "'service-data'") }) ?? [] {
      guard
        let entry = self.fields(item, of: "service data", allowed: ["uuid", "data"], required: ["uuid", "data"]),
        let uuid = entry["uuid"].flatMap({ uuid($0, "service data's 'uuid'") }),
        let bytes = entry["data"].flatMap({ hex($0, "service 'data'") })
      else { continue }
      data.serviceData[uuid] = bytes
    }
    data.appearance = fields["appearance"].flatMap { document.integer($0, "'appearance'", in: 0...0xFFFF) }
      .map(UInt16.init)
    data.txPowerLevel = fields["tx-power"].flatMap { document.integer($0, "'tx-power' (dBm)", in: -127...127) }
      .map(Int8.init)
    do {
      _ = try data.legacyLayout()
    } catch {
      document.fail(.invalidValue, at: node, "the advertising data does not fit: \(error)")
      return nil
    }
    return data
  }

  // MARK: Behaviour

  private func replay(_ node: Node, gatt: GATTProfile) -> ProfileDeclaration.Replay? {
    guard let fields = fields(node, of: "a replay", allowed: Self.replayKeys, required: ["file"]),
      let path = fields["file"].flatMap({ document.text($0, "a replay's 'file'") })
    else { return nil }
    let anchor =
      fields["from"].flatMap {
        document.setting($0, SettingSpec("from", .choice(Self.anchors), help: ""), "a replay's 'from'")?.text
      } ?? "connected"
    let loops = fields["loop"].flatMap { document.flag($0, "'loop'") } ?? false
    let sending = sendingKeys(gatt)
    let resolved = document.resolve(path)
    do {
      let entries = try NotificationRecording.read(path: resolved, keys: sending) { key in
        address(key, in: gatt, sendingOnly: true)
      }
      return ProfileDeclaration.Replay(file: resolved, anchor: anchor, loops: loops, entries: entries)
    } catch {
      document.absorb([error])
      return nil
    }
  }

  private func response(_ node: Node, gatt: GATTProfile) -> ProfileDeclaration.Response? {
    guard
      let fields = fields(node, of: "a response", allowed: Self.responseKeys, required: ["characteristic"]),
      let characteristicNode = fields["characteristic"],
      let target = characteristic(characteristicNode, in: gatt, writable: true)
    else { return nil }
    var response = ProfileDeclaration.Response(
      characteristic: target, bytes: nil, pattern: nil, replies: [], error: nil)
    switch (fields["value"], fields["pattern"]) {
    case (let node?, nil):
      guard let bytes = hex(node, "a response's 'value'") else { return nil }
      response.bytes = bytes
    case (nil, let node?):
      guard let text = document.text(node, "a response's 'pattern'") else { return nil }
      do {
        _ = try Regex(text)
      } catch {
        document.fail(.invalidValue, at: node, "'pattern' is not a regular expression: \(error)", found: "'\(text)'")
        return nil
      }
      response.pattern = text
    case (nil, nil): break
    case (_, let node?):
      document.fail(.invalidValue, at: node, "give 'value' (exact bytes) or 'pattern', not both")
      return nil
    }
    switch (fields["reply"], fields["error"]) {
    case (let node?, nil):
      guard let items = document.sequence(node, of: "'reply'") else { return nil }
      for item in items {
        guard let fields = self.fields(item, of: "a reply", allowed: Self.replyKeys, required: ["characteristic"]),
          let characteristic = fields["characteristic"].flatMap({ characteristic($0, in: gatt, writable: false) }),
          let value = fields["value"].map({ hex($0, "a reply's 'value'") }) ?? []
        else { return nil }
        let delay = fields["delay"].flatMap { document.duration($0, "a reply's 'delay'", allowZero: true) } ?? .zero
        response.replies.append(.init(characteristic: characteristic, value: value, delay: delay))
      }
    case (nil, let node?):
      guard let code = attError(node) else { return nil }
      response.error = code
    case (nil, nil):
      document.fail(.missingKey, at: node, "a response needs 'reply' (notifications) or 'error' (an ATT error)")
      return nil
    case (_, let node?):
      document.fail(.invalidValue, at: node, "give 'reply' or 'error', not both")
      return nil
    }
    return response
  }

  // MARK: Pieces

  /// The keys of the characteristics that notify or indicate.
  private func sendingKeys(_ gatt: GATTProfile) -> [String] {
    gatt.characteristicAddresses.filter { address in
      let properties = gatt.characteristic(at: address)?.properties ?? []
      return properties.contains(.notify) || properties.contains(.indicate)
    }.map { gatt.characteristicKey(at: $0) }
  }

  /// The address of the characteristic with key (or UUID) `name`.
  private func address(_ name: String, in gatt: GATTProfile, sendingOnly: Bool) -> CharacteristicAddress? {
    let address =
      gatt.characteristicAddresses.first { gatt.characteristicKey(at: $0) == name }
      ?? (try? BluetoothUUID(string: name)).flatMap { gatt.address(of: $0) }
    guard let address, sendingOnly else { return address }
    let properties = gatt.characteristic(at: address)?.properties ?? []
    return properties.contains(.notify) || properties.contains(.indicate) ? address : nil
  }

  /// A characteristic reference: writable for a response's target, sending for a reply.
  private func characteristic(_ node: Node, in gatt: GATTProfile, writable: Bool) -> CharacteristicAddress? {
    guard let name = document.text(node, "a characteristic") else { return nil }
    let candidates =
      writable
      ? gatt.characteristicAddresses.filter { address in
        let properties = gatt.characteristic(at: address)?.properties ?? []
        return properties.contains(.write) || properties.contains(.writeWithoutResponse)
      }.map { gatt.characteristicKey(at: $0) } : sendingKeys(gatt)
    guard let address = address(name, in: gatt, sendingOnly: !writable),
      candidates.contains(gatt.characteristicKey(at: address))
    else {
      document.failUnknown(
        .unknownReference, at: node,
        "the profile has no characteristic '\(name)' that " + (writable ? "takes writes" : "notifies or indicates"),
        name: name, among: candidates)
      return nil
    }
    return address
  }

  /// An ATT error by name (`write-not-permitted`) or code (`0x80`, `128`).
  private func attError(_ node: Node) -> UInt8? {
    guard let text = document.text(node, "a response's 'error'") else { return nil }
    if let code = ATTErrorName.code(text) { return code }
    let number = text.hasPrefix("0x") ? UInt8(text.dropFirst(2), radix: 16) : UInt8(text)
    guard let number, number > 0 else {
      document.failUnknown(
        .invalidValue, at: node, "a response's 'error' is neither an ATT error's name nor a code from 0x01 to 0xff",
        name: text, among: ATTErrorName.names)
      return nil
    }
    return number
  }

  private func uuid(_ node: Node, _ what: String) -> BluetoothUUID? {
    guard let text = document.text(node, what) else { return nil }
    do {
      return try BluetoothUUID(string: text)
    } catch {
      document.fail(
        .invalidValue, at: node, "\(what) is not a UUID: \(error)",
        expected: "16-bit (180d), 32-bit or 128-bit (6e400001-b5a3-f393-e0a9-e50e24dcca9e)", found: "'\(text)'")
      return nil
    }
  }

  private func hex(_ node: Node, _ what: String) -> [UInt8]? {
    // An empty value is no bytes: `value: ""`.
    if case .scalar(let scalar) = node, scalar.string.isEmpty, scalar.style != .plain { return [] }
    guard let text = document.text(node, what) else { return nil }
    guard let bytes = HexBytes.parse(text) else {
      document.fail(
        .invalidValue, at: node, "\(what) is not hex bytes", expected: "hex like 0a1b2c or '0a 1b 2c'",
        found: "'\(text)'")
      return nil
    }
    return bytes
  }

  private func fields(_ node: Node, of what: String, allowed: [String], required: [String] = []) -> [String: Node]? {
    guard let entries = document.entries(node, of: what, allowed: allowed, required: required) else { return nil }
    guard required.allSatisfy({ key in entries.contains { $0.key == key } }) else { return nil }
    return Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
  }
}
