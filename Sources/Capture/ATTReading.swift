import GATT

/// Reads one ATT PDU of a link into the link's GATT database and events:
/// discovery responses (paired with the request they answer), reads, writes
/// and their answers, CCCD writes, notifications and indications. A PDU too
/// short for its opcode is counted and otherwise ignored, as a central would.
enum ATTReading {
  static func read(_ frame: L2CAPReassembler.Frame, on link: inout CaptureWalk.Link) {
    guard let opcode = frame.payload.first else { return }
    link.connection.attPDUs += 1
    var reader = ByteReader(frame.payload, at: 1)
    let fromPeripheral = frame.direction == link.fromPeripheral
    let time = frame.time
    if !fromPeripheral {
      central(opcode, &reader, frame: frame, time: time, link: &link)
      return
    }
    let request = link.pending
    switch opcode {
    case 0x01:
      // Error Response: request opcode, handle, code.
      guard let requested = reader.uint8(), reader.uint16() != nil, let code = reader.uint8() else { return }
      if requested == 0x12, let index = link.pendingWrite { answer(index, code, on: &link) }
      link.pending = nil
    case 0x03:
      guard let mtu = reader.uint16() else { return }
      link.connection.mtu = Int(mtu)
    case 0x05:
      // Find Information Response: format (1: 16-bit, 2: 128-bit), then handle and UUID pairs.
      guard let format = reader.uint8() else { return }
      let width = format == 1 ? 2 : 16
      while let handle = reader.uint16(), let bytes = reader.bytes(width), let uuid = AdvertisingData.uuid(bytes) {
        link.connection.database.descriptors[handle] = uuid
      }
    case 0x09:
      // Read By Type Response: length, then handle and value entries.
      guard let length = reader.uint8(), length > 2 else { return }
      let type = request.flatMap { $0.first == 0x08 ? AdvertisingData.uuid($0.dropFirst(5)) : nil }
      while let handle = reader.uint16(), let value = reader.bytes(Int(length) - 2) {
        if type == BluetoothUUID(0x2803) {
          var declaration = ByteReader(value)
          guard let properties = declaration.uint8(), let valueHandle = declaration.uint16(),
            let uuid = AdvertisingData.uuid(declaration.bytes(declaration.remaining) ?? [])
          else { continue }
          link.connection.database.characteristics[valueHandle] = CapturedDatabase.Characteristic(
            declaration: handle, properties: CharacteristicProperties(rawValue: properties), valueHandle: valueHandle,
            uuid: uuid)
        } else if type != BluetoothUUID(0x2802) {
          remember(value, of: handle, on: &link)
        }
      }
    case 0x0B:
      // Read Response to a Read Request: the whole value, or its first part.
      if let request, request.first == 0x0A, request.count >= 3 {
        remember(Array(frame.payload.dropFirst()), of: UInt16(request[1]) | UInt16(request[2]) << 8, on: &link)
      }
      link.pending = nil
    case 0x0D:
      // Read Blob Response: the value from the requested offset.
      if let request, request.first == 0x0C, request.count >= 5 {
        let handle = UInt16(request[1]) | UInt16(request[2]) << 8
        let offset = Int(UInt16(request[3]) | UInt16(request[4]) << 8)
        let known = link.connection.database.values[handle] ?? []
        if known.count == offset { link.connection.database.values[handle] = known + frame.payload.dropFirst() }
      }
      link.pending = nil
    case 0x11:
      // Read By Group Type Response: length, then start, end and UUID entries.
      guard let length = reader.uint8(), length > 4 else { return }
      while let start = reader.uint16(), let end = reader.uint16(), let bytes = reader.bytes(Int(length) - 4),
        let uuid = AdvertisingData.uuid(bytes)
      {
        link.connection.database.services[start] = CapturedDatabase.Service(start: start, end: end, uuid: uuid)
      }
    case 0x13:
      if let index = link.pendingWrite { answer(index, 0, on: &link) }
      link.pending = nil
    case 0x1B, 0x1D:
      guard let handle = reader.uint16() else { return }
      let value = reader.bytes(reader.remaining) ?? []
      link.connection.events.append(
        (time, opcode == 0x1B ? .notification(handle: handle, value: value) : .indication(handle: handle, value: value))
      )
    case 0x23:
      // Multiple Handle Value Notification: handle, length, value, …
      while let handle = reader.uint16(), let length = reader.uint16(), let value = reader.bytes(Int(length)) {
        link.connection.events.append((time, .notification(handle: handle, value: value)))
      }
    default:
      if opcode & 0x01 == 1, opcode < 0x20 { link.pending = nil }
    }
  }

  /// A PDU from the central: requests are kept for their responses; writes and CCCD writes become events.
  private static func central(
    _ opcode: UInt8, _ reader: inout ByteReader, frame: L2CAPReassembler.Frame, time: Int64,
    link: inout CaptureWalk.Link
  ) {
    switch opcode {
    case 0x12, 0x52:
      guard let handle = reader.uint16() else { return }
      let value = reader.bytes(reader.remaining) ?? []
      if link.connection.database.isCCCD(handle), value.count == 2 {
        link.connection.events.append(
          (time, .subscription(handle: handle - 1, value: UInt16(value[0]) | UInt16(value[1]) << 8)))
        if opcode == 0x12 {
          link.pending = frame.payload
          link.pendingWrite = nil
        }
        return
      }
      link.connection.events.append(
        (time, .write(handle: handle, value: value, withResponse: opcode == 0x12, answer: nil)))
      if opcode == 0x12 {
        link.pending = frame.payload
        link.pendingWrite = link.connection.events.count - 1
      }
    case 0x1E:
      break
    default:
      // A request (even opcodes below 0x20 other than commands) awaits its response.
      if opcode & 0x01 == 0, opcode < 0x20 {
        link.pending = frame.payload
        link.pendingWrite = nil
      }
    }
  }

  private static func answer(_ index: Int, _ code: UInt8, on link: inout CaptureWalk.Link) {
    guard index < link.connection.events.count,
      case .write(let handle, let value, let withResponse, nil) = link.connection.events[index].event
    else { return }
    link.connection.events[index].event = .write(handle: handle, value: value, withResponse: withResponse, answer: code)
    link.pendingWrite = nil
  }

  private static func remember(_ value: [UInt8], of handle: UInt16, on link: inout CaptureWalk.Link) {
    if link.connection.database.values[handle] == nil { link.connection.database.values[handle] = value }
  }
}
