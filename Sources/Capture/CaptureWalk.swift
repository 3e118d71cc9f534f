import GATT

/// Walks a capture's HCI packets in order: learns the controllers'
/// addresses, collects advertising data, follows each LE link from its
/// connection to its disconnection, reassembles its L2CAP frames, and reads
/// ATT on them into each link's GATT database and events.
struct CaptureWalk {
  struct LinkKey: Hashable {
    var controller: UInt16
    var handle: UInt16
  }

  /// One LE link as one controller sees it.
  struct Link {
    var key: LinkKey
    /// Whether this controller is the central of the link.
    var isCentral: Bool
    var peer: DeviceAddress
    var connection: CapturedConnection
    /// The central's request awaiting its response.
    var pending: [UInt8]?
    /// A write request awaiting its answer: the index of its event.
    var pendingWrite: Int?

    /// The direction the peripheral's PDUs travel in on this controller.
    var fromPeripheral: HCIPacket.Direction { isCentral ? .received : .sent }
  }

  private(set) var records = 0
  private var controllers: [UInt16: DeviceAddress] = [:]
  private var advertised: [DeviceAddress: [CapturedAdvertisement]] = [:]
  /// What each controller was told to advertise.
  private var ownAdvertising: [UInt16: [CapturedAdvertisement]] = [:]
  private var links: [LinkKey: Link] = [:]
  private var ended: [Link] = []
  private var reassembler = L2CAPReassembler()

  mutating func add(_ packet: HCIPacket) throws(CaptureError) {
    records += 1
    switch packet.content {
    case .newController(let address):
      // A controller may appear before its address is set: a zero address is no address.
      if address.bytes.contains(where: { $0 != 0 }) || controllers[packet.controller] == nil {
        controllers[packet.controller] = address
      }
    case .command(let opcode, let parameters):
      command(opcode, ByteReader(Array(parameters)), packet: packet)
    case .event(let code, let parameters):
      try event(code, ByteReader(Array(parameters)), packet: packet)
    case .acl:
      guard let frame = try reassembler.add(packet) else { return }
      let key = LinkKey(controller: frame.controller, handle: frame.handle)
      guard frame.channel == 4, links[key] != nil else { return }
      // In place: a copy of the link would copy its events for every frame.
      if frame.isCut {
        // Counted as ATT traffic, so an import says it cannot be read rather than that there is none.
        links[key]!.connection.attPDUs += 1
        if links[key]!.connection.firstCutATT == nil {
          links[key]!.connection.firstCutATT = (frame.record, frame.offset, frame.payload.count)
        }
      } else {
        ATTReading.read(frame, on: &links[key]!)
      }
    case .other:
      break
    }
  }

  mutating func finish() throws(CaptureError) {
    try reassembler.finish()
    ended += links.values.sorted { $0.connection.connectedAt < $1.connection.connectedAt }
    links = [:]
  }

  // MARK: Commands and events

  private mutating func command(_ opcode: UInt16, _ parameters: ByteReader, packet: HCIPacket) {
    var reader = parameters
    switch opcode {
    case 0x2008, 0x2009:
      // LE Set Advertising Data / Set Scan Response Data: length, 31 bytes.
      guard let length = reader.uint8(), let data = reader.bytes(min(Int(length), reader.remaining)) else { return }
      Self.add(
        data, at: packet.time, scanResponse: opcode == 0x2009, to: &ownAdvertising[packet.controller, default: []])
    case 0x2037, 0x2038:
      // LE Set Extended Advertising / Scan Response Data: handle, operation, fragment preference, length, data.
      guard reader.bytes(3) != nil, let length = reader.uint8(),
        let data = reader.bytes(min(Int(length), reader.remaining))
      else { return }
      Self.add(
        data, at: packet.time, scanResponse: opcode == 0x2038, to: &ownAdvertising[packet.controller, default: []])
    default:
      break
    }
  }

  /// Adds advertising data unless it is what the same kind said last.
  private static func add(
    _ bytes: [UInt8], at time: Int64, scanResponse: Bool, to list: inout [CapturedAdvertisement]
  ) {
    let data = AdvertisingData.parse(bytes)
    if list.last(where: { $0.isScanResponse == scanResponse })?.data == data { return }
    list.append(CapturedAdvertisement(time: time, isScanResponse: scanResponse, data: data))
  }

  private mutating func event(_ code: UInt8, _ parameters: ByteReader, packet: HCIPacket) throws(CaptureError) {
    var reader = parameters
    switch code {
    case 0x05:
      // Disconnection Complete: status, handle, reason.
      guard let status = reader.uint8(), status == 0, let handle = reader.uint16(), let reason = reader.uint8() else {
        return
      }
      let key = LinkKey(controller: packet.controller, handle: handle & 0x0FFF)
      try reassembler.linkEnded(controller: key.controller, handle: key.handle, in: packet)
      guard var link = links.removeValue(forKey: key) else { return }
      link.connection.disconnection = (packet.time, reason)
      ended.append(link)
    case 0x08, 0x59:
      // Encryption Change (v1, v2): status, handle, enabled.
      guard let status = reader.uint8(), status == 0, let handle = reader.uint16(), let enabled = reader.uint8(),
        enabled != 0
      else { return }
      let key = LinkKey(controller: packet.controller, handle: handle & 0x0FFF)
      if links[key]?.connection.encryptedAt == nil {
        links[key]?.connection.encryptedAt = (packet.record, packet.offset)
      }
    case 0x0E:
      // Command Complete: Read BD_ADDR gives an H4 capture its controller's address.
      guard reader.uint8() != nil, let opcode = reader.uint16(), opcode == 0x1009, reader.uint8() == 0,
        let address = reader.bytes(6)
      else { return }
      controllers[packet.controller] = DeviceAddress(littleEndian: address)
    case 0x3E:
      guard let subevent = reader.uint8() else { return }
      switch subevent {
      case 0x01, 0x0A, 0x29:
        // LE (Enhanced) Connection Complete: status, handle, role, peer address type, peer address.
        guard let status = reader.uint8(), status == 0, let handle = reader.uint16(), let role = reader.uint8(),
          reader.uint8() != nil, let peer = reader.bytes(6)
        else { return }
        let key = LinkKey(controller: packet.controller, handle: handle & 0x0FFF)
        if let stale = links.removeValue(forKey: key) { ended.append(stale) }
        links[key] = Link(
          key: key, isCentral: role == 0, peer: DeviceAddress(littleEndian: peer),
          connection: CapturedConnection(
            controller: key.controller, handle: key.handle, seenFromCentral: role == 0, connectedAt: packet.time))
      case 0x02:
        // LE Advertising Report: count, then per report event type, address type, address, length, data, RSSI.
        guard let count = reader.uint8() else { return }
        for _ in 0..<count {
          guard let type = reader.uint8(), reader.uint8() != nil, let address = reader.bytes(6),
            let length = reader.uint8(), let data = reader.bytes(Int(length)), reader.uint8() != nil
          else { return }
          Self.add(
            data, at: packet.time, scanResponse: type == 0x04,
            to: &advertised[DeviceAddress(littleEndian: address), default: []])
        }
      case 0x0D:
        // LE Extended Advertising Report: count, then per report 24 bytes of fields, length, data.
        guard let count = reader.uint8() else { return }
        for _ in 0..<count {
          guard let type = reader.uint16(), reader.uint8() != nil, let address = reader.bytes(6),
            reader.bytes(14) != nil, let length = reader.uint8(), let data = reader.bytes(Int(length))
          else { return }
          Self.add(
            data, at: packet.time, scanResponse: type & 0x08 != 0,
            to: &advertised[DeviceAddress(littleEndian: address), default: []])
        }
      default:
        break
      }
    default:
      break
    }
  }

  // MARK: Peripherals

  /// Whether two timestamps are less than a second apart (without overflowing on wild ones).
  static func withinASecond(_ a: Int64, _ b: Int64) -> Bool {
    let (difference, overflow) = a.subtractingReportingOverflow(b)
    return !overflow && difference.magnitude < 1_000_000
  }

  /// Every peripheral: each link's view of it merged, each connection once.
  func peripherals() -> [CapturedPeripheral] {
    var found: [DeviceAddress: CapturedPeripheral] = [:]
    var order: [DeviceAddress] = []
    func entry(_ address: DeviceAddress) -> CapturedPeripheral {
      if let existing = found[address] { return existing }
      order.append(address)
      return CapturedPeripheral(
        address: address, advertisement: AdvertisementData(), database: CapturedDatabase(), connections: [])
    }
    let all = ended.sorted { $0.connection.connectedAt < $1.connection.connectedAt }
    // The central's view of a link first: a field capture is taken there, and
    // the lab's has both sides of each link.
    for link in all where link.isCentral {
      var peripheral = entry(link.peer)
      peripheral.database.merge(link.connection.database)
      peripheral.connections.append(link.connection)
      found[link.peer] = peripheral
    }
    for link in all where !link.isCentral {
      guard let own = controllers[link.key.controller] else { continue }
      var peripheral = entry(own)
      peripheral.database.merge(link.connection.database)
      // The same connection seen from the central's controller is already there.
      let seen = peripheral.connections.contains { connection in
        connection.seenFromCentral && controllers[connection.controller] == link.peer
          && Self.withinASecond(connection.connectedAt, link.connection.connectedAt)
      }
      if !seen { peripheral.connections.append(link.connection) }
      found[own] = peripheral
    }
    // What a scanner heard, else what the peripheral's own controller was told to send.
    for (address, list) in advertised.sorted(by: { $0.key < $1.key }) {
      var peripheral = entry(address)
      peripheral.advertisements = list
      found[address] = peripheral
    }
    for (controller, list) in ownAdvertising.sorted(by: { $0.key < $1.key }) {
      guard let own = controllers[controller] else { continue }
      var peripheral = entry(own)
      if peripheral.advertisements.isEmpty { peripheral.advertisements = list }
      found[own] = peripheral
    }
    return order.compactMap { found[$0] }.map { peripheral in
      var sorted = peripheral
      sorted.connections.sort { $0.connectedAt < $1.connectedAt }
      sorted.advertisement = sorted.advertisement(at: sorted.connections.first?.connectedAt ?? .max)
      return sorted
    }.enumerated().sorted { a, b in
      (a.element.attPDUs > 0 ? 0 : 1, a.offset) < (b.element.attPDUs > 0 ? 0 : 1, b.offset)
    }.map(\.element)
  }
}
