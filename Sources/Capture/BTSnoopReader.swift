/// Reads a btsnoop file record by record: the 16-byte header (identification
/// pattern, version 1, datalink), then records of 24 bytes of big-endian
/// header (original length, included length, flags, cumulative drops,
/// timestamp in microseconds since year 0) and the included bytes.
///
/// Every problem throws a `CaptureError` naming the record and its offset:
/// a file that ends inside a record, an included length longer than the
/// original, or longer than a packet can be.
public struct BTSnoopReader: Sendable {
  /// How the records' packets are framed.
  public enum Datalink: UInt32, Sendable, CustomStringConvertible {
    /// Android's (and most tools') HCI UART framing: a packet type byte first.
    case h4 = 1002
    /// Linux's monitor channel (btmon): the flags carry the controller index and an opcode.
    case monitor = 2001

    public var description: String {
      switch self {
      case .h4: "H4 (1002)"
      case .monitor: "Linux monitor (2001)"
      }
    }
  }

  /// One record: where it is and what it holds.
  public struct Record: Sendable {
    /// 1-based, in file order.
    public var number: Int
    /// Byte offset of the record's header in the file.
    public var offset: Int
    public var originalLength: Int
    public var flags: UInt32
    public var drops: UInt32
    /// Microseconds since midnight, January 1st of year 0 (as btsnoop counts).
    public var timestamp: Int64
    /// The included bytes.
    public var data: ArraySlice<UInt8>

    /// Whether the capturing tool kept fewer bytes than the packet had.
    public var isCut: Bool { data.count < originalLength }
  }

  public static let identification: [UInt8] = Array("btsnoop".utf8) + [0]
  static let headerSize = 16
  static let recordHeaderSize = 24
  /// Larger than any HCI packet with its monitor or H4 framing (an ACL packet
  /// is at most 4 + 65535 bytes); a record longer than this is a lying length.
  public static let maximumRecordLength = 4 + 4 + 65_535

  public let bytes: [UInt8]
  public let datalink: Datalink
  private var position = headerSize
  private var number = 0

  /// Checks the file header.
  public init(_ bytes: [UInt8]) throws(CaptureError) {
    self.bytes = bytes
    guard bytes.count >= Self.headerSize else {
      if bytes.count >= 8, Array(bytes[0..<8]) != Self.identification {
        throw CaptureError(.notBTSnoop, "not a btsnoop file (it does not start with \"btsnoop\")")
      }
      throw CaptureError(
        .truncated, "the file ends inside the btsnoop header (\(bytes.count) of \(Self.headerSize) bytes)")
    }
    guard Array(bytes[0..<8]) == Self.identification else {
      throw CaptureError(.notBTSnoop, "not a btsnoop file (it does not start with \"btsnoop\")")
    }
    let version = Self.uint32(bytes, 8)
    guard version == 1 else {
      throw CaptureError(.notBTSnoop, "btsnoop version \(version) is not version 1")
    }
    let code = Self.uint32(bytes, 12)
    guard let datalink = Datalink(rawValue: code) else {
      let known: [UInt32: String] = [1001: "HCI without framing", 1003: "BCSP", 1004: "3-wire (H5)", 2002: "simulator"]
      throw CaptureError(
        .unknownDatalink,
        "datalink \(code)\(known[code].map { " (\($0))" } ?? "") is not one this reader decodes: "
          + "it reads 1002 (H4, Android's btsnoop_hci.log) and 2001 (Linux monitor, btmon -w)")
    }
    self.datalink = datalink
  }

  /// The next record, or `nil` at the end of the file.
  public mutating func next() throws(CaptureError) -> Record? {
    guard position < bytes.count else { return nil }
    number += 1
    let offset = position
    guard bytes.count - offset >= Self.recordHeaderSize else {
      throw CaptureError(
        .truncated,
        "the file ends inside this record's header (\(bytes.count - offset) of \(Self.recordHeaderSize) bytes)",
        record: number, offset: offset)
    }
    let original = Int(Self.uint32(bytes, offset))
    let included = Int(Self.uint32(bytes, offset + 4))
    guard included <= original else {
      throw CaptureError(
        .badLength, "the included length (\(included)) is longer than the original length (\(original))",
        record: number, offset: offset)
    }
    guard included <= Self.maximumRecordLength else {
      throw CaptureError(
        .badLength, "the included length (\(included)) is longer than any HCI packet", record: number, offset: offset)
    }
    let start = offset + Self.recordHeaderSize
    guard bytes.count - start >= included else {
      throw CaptureError(
        .truncated, "the file ends inside this record (\(bytes.count - start) of \(included) bytes)", record: number,
        offset: offset)
    }
    position = start + included
    return Record(
      number: number, offset: offset, originalLength: original, flags: Self.uint32(bytes, offset + 8),
      drops: Self.uint32(bytes, offset + 12), timestamp: Int64(bitPattern: Self.uint64(bytes, offset + 16)),
      data: bytes[start..<start + included])
  }

  static func uint32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
  }

  static func uint64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
    UInt64(uint32(bytes, at)) << 32 | UInt64(uint32(bytes, at + 4))
  }
}
