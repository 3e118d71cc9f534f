/// One HCI packet of a capture, with the controller it went through, its
/// direction, its time and the record it came from.
public struct HCIPacket: Sendable {
  public enum Direction: Sendable, Hashable {
    /// Host to controller: commands, outgoing ACL data.
    case sent
    /// Controller to host: events, incoming ACL data.
    case received
  }

  public enum Content: Sendable {
    case command(opcode: UInt16, parameters: ArraySlice<UInt8>)
    case event(code: UInt8, parameters: ArraySlice<UInt8>)
    /// An ACL fragment: the connection handle, the packet boundary flag
    /// (0 or 2 starts an L2CAP frame, 1 continues one) and the data.
    case acl(handle: UInt16, boundary: UInt8, data: ArraySlice<UInt8>)
    /// A controller appeared or told its address (monitor only).
    case newController(address: DeviceAddress)
    /// Anything else: SCO, ISO, notes and logs of the monitor.
    case other
  }

  /// The controller's index (always 0 in an H4 capture).
  public var controller: UInt16
  public var direction: Direction
  public var content: Content
  /// Microseconds, as the record's timestamp.
  public var time: Int64
  public var record: Int
  public var offset: Int
  /// Whether the capture kept fewer bytes than the packet had.
  public var isCut: Bool

  /// The packet in `record`, framed as `datalink` frames it.
  public static func decode(_ record: BTSnoopReader.Record, datalink: BTSnoopReader.Datalink) throws(CaptureError)
    -> HCIPacket
  {
    var packet = HCIPacket(
      controller: 0, direction: .sent, content: .other, time: record.timestamp, record: record.number,
      offset: record.offset, isCut: record.isCut)
    let data = record.data
    let type: UInt8
    var body: ArraySlice<UInt8>
    switch datalink {
    case .h4:
      guard let first = data.first else {
        throw packet.error(.malformedPacket, "an H4 record with no packet type byte")
      }
      packet.direction = record.flags & 1 == 0 ? .sent : .received
      type = first
      body = data.dropFirst()
    case .monitor:
      packet.controller = UInt16(truncatingIfNeeded: record.flags >> 16)
      let opcode = UInt16(truncatingIfNeeded: record.flags)
      body = data
      switch opcode {
      case 0:
        // New Index: type, bus, address (6), name (8).
        guard data.count >= 8 else {
          if record.isCut { return packet }
          throw packet.error(.badLength, "a New Index record of \(data.count) bytes, shorter than 8")
        }
        let start = data.startIndex + 2
        packet.content = .newController(address: DeviceAddress(littleEndian: data[start..<start + 6]))
        return packet
      case 10:
        // Index Info: address (6), manufacturer (2).
        guard data.count >= 6 else {
          if record.isCut { return packet }
          throw packet.error(.badLength, "an Index Info record of \(data.count) bytes, shorter than 6")
        }
        packet.content = .newController(address: DeviceAddress(littleEndian: data.prefix(6)))
        return packet
      case 2: (type, packet.direction) = (1, .sent)
      case 3: (type, packet.direction) = (4, .received)
      case 4: (type, packet.direction) = (2, .sent)
      case 5: (type, packet.direction) = (2, .received)
      default: return packet
      }
    }
    switch type {
    case 1:
      guard body.count >= 3 else { return try packet.short("command", body.count, 3) }
      let opcode = UInt16(body[body.startIndex]) | UInt16(body[body.startIndex + 1]) << 8
      let length = Int(body[body.startIndex + 2])
      let parameters = body.dropFirst(3)
      try packet.check(length, parameters.count, "command 0x\(hex16(opcode))")
      packet.content = .command(opcode: opcode, parameters: parameters.prefix(length))
    case 4:
      guard body.count >= 2 else { return try packet.short("event", body.count, 2) }
      let code = body[body.startIndex]
      let length = Int(body[body.startIndex + 1])
      let parameters = body.dropFirst(2)
      try packet.check(length, parameters.count, "event 0x\(String(code, radix: 16))")
      packet.content = .event(code: code, parameters: parameters.prefix(length))
    case 2:
      guard body.count >= 4 else { return try packet.short("ACL packet", body.count, 4) }
      let word = UInt16(body[body.startIndex]) | UInt16(body[body.startIndex + 1]) << 8
      let length = Int(UInt16(body[body.startIndex + 2]) | UInt16(body[body.startIndex + 3]) << 8)
      let payload = body.dropFirst(4)
      try packet.check(length, payload.count, "ACL packet")
      packet.content = .acl(
        handle: word & 0x0FFF, boundary: UInt8(truncatingIfNeeded: (word >> 12) & 0x3), data: payload.prefix(length))
    default:
      break
    }
    return packet
  }

  func error(_ kind: CaptureError.Kind, _ message: String) -> CaptureError {
    CaptureError(kind, message, record: record, offset: offset)
  }

  /// A header cut short: nothing to read in a cut record, an error otherwise.
  private func short(_ what: String, _ count: Int, _ needed: Int) throws(CaptureError) -> HCIPacket {
    if isCut { return self }
    throw error(.badLength, "an HCI \(what) of \(count) bytes, shorter than its \(needed)-byte header")
  }

  /// The length a header declares against the bytes that follow it.
  private func check(_ declared: Int, _ present: Int, _ what: String) throws(CaptureError) {
    if declared > present, !isCut {
      throw error(.badLength, "the \(what) says it has \(declared) bytes but the record holds \(present)")
    }
    if declared < present {
      throw error(.badLength, "the \(what) says it has \(declared) bytes but the record holds \(present)")
    }
  }
}

func hex16(_ value: UInt16) -> String {
  let text = String(value, radix: 16)
  return String(repeating: "0", count: max(0, 4 - text.count)) + text
}
