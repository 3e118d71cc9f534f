import GATT

/// Writes btsnoop captures for the tests: the file header, then records of
/// HCI packets framed as the monitor (2001) or H4 (1002) datalink frames
/// them, with helpers for the LE packets a GATT session consists of.
struct CaptureFixture {
  enum Datalink: UInt32 {
    case h4 = 1002
    case monitor = 2001
  }

  let datalink: Datalink
  private(set) var bytes: [UInt8]
  /// Byte offsets of each record's header, by record number − 1.
  private(set) var offsets: [Int] = []
  /// The time of the next record, in microseconds since year 0.
  var time: Int64 = 0x00E0_3AB4_4A67_6000

  init(_ datalink: Datalink, version: UInt32 = 1, rawDatalink: UInt32? = nil) {
    self.datalink = datalink
    bytes = Array("btsnoop".utf8) + [0]
    Self.append32(version, to: &bytes)
    Self.append32(rawDatalink ?? datalink.rawValue, to: &bytes)
  }

  static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
    bytes += [
      UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
      UInt8(truncatingIfNeeded: value),
    ]
  }

  static func le16(_ value: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(value >> 8)] }

  /// Appends a raw record.
  mutating func record(_ data: [UInt8], flags: UInt32, original: Int? = nil, included: Int? = nil) {
    offsets.append(bytes.count)
    Self.append32(UInt32(original ?? data.count), to: &bytes)
    Self.append32(UInt32(included ?? data.count), to: &bytes)
    Self.append32(flags, to: &bytes)
    Self.append32(0, to: &bytes)
    Self.append32(UInt32(truncatingIfNeeded: UInt64(time) >> 32), to: &bytes)
    Self.append32(UInt32(truncatingIfNeeded: UInt64(time)), to: &bytes)
    bytes += data
  }

  /// Moves the clock on.
  mutating func wait(_ microseconds: Int64) { time += microseconds }

  // MARK: HCI packets

  enum Kind { case command, event, aclSent, aclReceived }

  mutating func packet(_ kind: Kind, _ body: [UInt8], controller: UInt16 = 0, cutTo: Int? = nil) {
    var data: [UInt8]
    var flags: UInt32
    switch datalink {
    case .monitor:
      data = body
      let opcode: UInt32 =
        switch kind {
        case .command: 2
        case .event: 3
        case .aclSent: 4
        case .aclReceived: 5
        }
      flags = UInt32(controller) << 16 | opcode
    case .h4:
      switch kind {
      case .command: (data, flags) = ([1] + body, 2)
      case .event: (data, flags) = ([4] + body, 3)
      case .aclSent: (data, flags) = ([2] + body, 0)
      case .aclReceived: (data, flags) = ([2] + body, 1)
      }
    }
    let original = data.count
    if let cutTo { data = Array(data.prefix(cutTo)) }
    record(data, flags: flags, original: original)
  }

  mutating func newIndex(_ controller: UInt16, address: [UInt8]) {
    record(
      [0, 0] + address.reversed() + Array("hci\(controller)".utf8) + [0, 0, 0, 0], flags: UInt32(controller) << 16)
  }

  mutating func event(_ code: UInt8, _ parameters: [UInt8], controller: UInt16 = 0) {
    packet(.event, [code, UInt8(parameters.count)] + parameters, controller: controller)
  }

  mutating func command(_ opcode: UInt16, _ parameters: [UInt8], controller: UInt16 = 0) {
    packet(.command, Self.le16(opcode) + [UInt8(parameters.count)] + parameters, controller: controller)
  }

  /// An LE advertising report of `address` with AD structures `data`.
  mutating func advertisingReport(_ address: [UInt8], _ data: [UInt8], controller: UInt16 = 0) {
    event(
      0x3E, [0x02, 1, 0x00, 0x00] + address.reversed() + [UInt8(data.count)] + data + [0xC4], controller: controller)
  }

  /// LE Connection Complete: `role` 0 central, 1 peripheral.
  mutating func connected(_ handle: UInt16, peer: [UInt8], role: UInt8 = 0, controller: UInt16 = 0) {
    event(
      0x3E, [0x01, 0x00] + Self.le16(handle) + [role, 0x00] + peer.reversed() + [0x18, 0, 0, 0, 0x48, 0, 0],
      controller: controller)
  }

  mutating func disconnected(_ handle: UInt16, reason: UInt8, controller: UInt16 = 0) {
    event(0x05, [0x00] + Self.le16(handle) + [reason], controller: controller)
  }

  mutating func encrypted(_ handle: UInt16, controller: UInt16 = 0) {
    event(0x08, [0x00] + Self.le16(handle) + [0x01], controller: controller)
  }

  /// An ACL packet: `boundary` 0 or 2 starts a frame, 1 continues one.
  mutating func acl(
    _ handle: UInt16, _ data: [UInt8], received: Bool, boundary: UInt16 = 2, controller: UInt16 = 0,
    cutTo: Int? = nil
  ) {
    packet(
      received ? .aclReceived : .aclSent, Self.le16(handle | boundary << 12) + Self.le16(UInt16(data.count)) + data,
      controller: controller, cutTo: cutTo)
  }

  /// An ATT PDU on the ATT channel, in one ACL packet or split into `fragments` of at most that many bytes.
  mutating func att(
    _ handle: UInt16, _ pdu: [UInt8], fromPeripheral: Bool, centralSide: Bool = true, fragment: Int? = nil,
    controller: UInt16 = 0, cutTo: Int? = nil
  ) {
    let frame = Self.le16(UInt16(pdu.count)) + Self.le16(4) + pdu
    let received = fromPeripheral == centralSide
    guard let fragment else {
      acl(handle, frame, received: received, controller: controller, cutTo: cutTo)
      return
    }
    var first = true
    for start in stride(from: 0, to: frame.count, by: fragment) {
      acl(
        handle, Array(frame[start..<min(frame.count, start + fragment)]), received: received,
        boundary: first ? 2 : 1, controller: controller)
      first = false
    }
  }
}

extension CaptureFixture {
  /// Appends the records of `other` (same datalink) after these.
  mutating func append(recordsOf other: CaptureFixture) {
    let shift = bytes.count - 16
    offsets += other.offsets.map { $0 + shift }
    bytes += other.bytes.dropFirst(16)
  }
}
