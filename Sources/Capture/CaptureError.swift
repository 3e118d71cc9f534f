/// Why a capture cannot be read or imported, and where: the record number
/// (1-based, in file order) and the byte offset of the record's header in
/// the file, for every problem with a record.
public struct CaptureError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The kind of problem, stable for scripts and tests to match on.
  public enum Kind: String, Hashable, Sendable {
    /// Not a btsnoop file (no identification pattern, another version).
    case notBTSnoop = "not-btsnoop"
    /// A datalink this reader does not decode.
    case unknownDatalink = "unknown-datalink"
    /// The file ends inside a header or a record.
    case truncated
    /// A length field that disagrees with what follows it.
    case badLength = "bad-length"
    /// Timestamps that cannot belong to one session.
    case badTimestamp = "bad-timestamp"
    /// An HCI packet or an ACL fragment that is malformed or out of order.
    case malformedPacket = "malformed-packet"
    /// ACL fragments that never make a whole L2CAP frame.
    case incompleteFragments = "incomplete-fragments"
    /// A link whose ATT traffic cannot be read because it was encrypted.
    case encryptedLink = "encrypted-link"
    /// No ATT traffic at all, or none with the peripheral asked for.
    case noATTTraffic = "no-att-traffic"
    /// `--device` names a peripheral the capture does not have.
    case unknownDevice = "unknown-device"
    /// The file cannot be opened.
    case unreadable
  }

  public var kind: Kind
  /// What is wrong, in a sentence.
  public var message: String
  /// The 1-based number of the record at fault, when one is.
  public var record: Int?
  /// The byte offset of that record's header in the file.
  public var offset: Int?

  public init(_ kind: Kind, _ message: String, record: Int? = nil, offset: Int? = nil) {
    self.kind = kind
    self.message = message
    self.record = record
    self.offset = offset
  }

  public var description: String {
    guard let record, let offset else { return message }
    return "record \(record) (byte offset \(offset)): \(message)"
  }
}
