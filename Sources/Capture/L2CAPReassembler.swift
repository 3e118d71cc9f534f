/// Reassembles ACL fragments into L2CAP frames, per controller, connection
/// handle and direction. A fragment that continues nothing, a frame that
/// grows past its declared length, and a frame left incomplete when a new
/// one starts, its link ends or the capture ends are errors naming the
/// record where the problem is.
public struct L2CAPReassembler: Sendable {
  /// A whole L2CAP frame.
  public struct Frame: Sendable {
    public var controller: UInt16
    public var handle: UInt16
    public var direction: HCIPacket.Direction
    /// The channel: 4 is ATT, 5 LE signalling, 6 the Security Manager.
    public var channel: UInt16
    public var payload: [UInt8]
    /// The time of its last fragment, in microseconds.
    public var time: Int64
    /// The record of its first fragment.
    public var record: Int
    public var offset: Int
    /// Whether the capture cut any of its fragments short (the payload is then partial).
    public var isCut: Bool
  }

  struct Key: Hashable {
    var controller: UInt16
    var handle: UInt16
    var direction: HCIPacket.Direction
  }

  struct Partial {
    var length: Int
    var bytes: [UInt8]
    var record: Int
    var offset: Int
    var isCut: Bool
  }

  private var partials: [Key: Partial] = [:]

  public init() {}

  /// Adds an ACL fragment; returns the frame it completes, if any.
  public mutating func add(_ packet: HCIPacket) throws(CaptureError) -> Frame? {
    guard case .acl(let handle, let boundary, let data) = packet.content else { return nil }
    let key = Key(controller: packet.controller, handle: handle, direction: packet.direction)
    var partial: Partial
    if boundary == 1 {
      guard let existing = partials[key] else {
        if packet.isCut { return nil }
        throw packet.error(
          .malformedPacket, "an ACL continuation fragment on handle 0x\(hex16(handle)) continues no L2CAP frame")
      }
      partial = existing
      partial.bytes += data
      partial.isCut = partial.isCut || packet.isCut
    } else {
      if let existing = partials[key] {
        throw incomplete(existing, handle: handle, why: "a new frame starts in record \(packet.record)")
      }
      guard data.count >= 4 || packet.isCut else {
        throw packet.error(
          .badLength, "an ACL start fragment of \(data.count) bytes, shorter than the 4-byte L2CAP header")
      }
      guard data.count >= 4 else { return nil }
      let length = Int(UInt16(data[data.startIndex]) | UInt16(data[data.startIndex + 1]) << 8)
      partial = Partial(
        length: length + 4, bytes: Array(data), record: packet.record, offset: packet.offset, isCut: packet.isCut)
    }
    if partial.bytes.count > partial.length {
      partials[key] = nil
      throw packet.error(
        .badLength,
        "the L2CAP frame on handle 0x\(hex16(handle)) says it has \(partial.length - 4) bytes but its fragments"
          + " hold \(partial.bytes.count - 4)")
    }
    // A cut fragment ends what can be read of its frame.
    guard partial.bytes.count == partial.length || partial.isCut else {
      partials[key] = partial
      return nil
    }
    partials[key] = nil
    let bytes = partial.bytes
    return Frame(
      controller: packet.controller, handle: handle, direction: packet.direction,
      channel: UInt16(bytes[2]) | UInt16(bytes[3]) << 8, payload: Array(bytes.dropFirst(4)), time: packet.time,
      record: partial.record, offset: partial.offset, isCut: partial.isCut)
  }

  /// The link `handle` on `controller` ended: a frame left incomplete on it is an error.
  public mutating func linkEnded(controller: UInt16, handle: UInt16, in packet: HCIPacket) throws(CaptureError) {
    for direction in [HCIPacket.Direction.sent, .received] {
      let key = Key(controller: controller, handle: handle, direction: direction)
      if let partial = partials.removeValue(forKey: key) {
        throw incomplete(partial, handle: handle, why: "its link ended in record \(packet.record)")
      }
    }
  }

  /// The capture ended: a frame left incomplete is an error.
  public func finish() throws(CaptureError) {
    if let (key, partial) = partials.min(by: { $0.value.record < $1.value.record }) {
      throw incomplete(partial, handle: key.handle, why: "the capture ends")
    }
  }

  private func incomplete(_ partial: Partial, handle: UInt16, why: String) -> CaptureError {
    CaptureError(
      .incompleteFragments,
      "the L2CAP frame on handle 0x\(hex16(handle)) that starts here never completes: \(partial.bytes.count - 4) of"
        + " its \(partial.length - 4) bytes came before \(why)",
      record: partial.record, offset: partial.offset)
  }
}
