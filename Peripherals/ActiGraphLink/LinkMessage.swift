import GATT

/// One message of the ActiGraph Link emulation profile (README.md): a type
/// byte, a little-endian 16-bit payload length, and the payload. Messages
/// are split into chunks of at most ATT_MTU − 3 bytes; the receiver joins
/// chunks until a whole message is there.
public struct LinkMessage: Hashable, Sendable {
  /// Message types (this project's choice; the real protocol is not public).
  public enum Kind: UInt8, Sendable {
    /// Central → device: request the status. No payload.
    case getStatus = 0x01
    /// Central → device: raw streaming on (1) or off (0). One byte.
    case setRawStream = 0x02
    /// Central → device: IMU sensors on/off. One byte of flags.
    case setIMU = 0x03
    /// Central → device: download the epochs between two Unix times (u32, u32).
    case downloadEpochs = 0x04
    /// Device → central: the answer to a command: command type, result.
    case acknowledge = 0x80
    /// Device → central: the status (battery, clock, log bounds, streaming).
    case status = 0x81
    /// Device → central: a download begins: the number of records (u32) and the first one's Unix time (u32).
    case downloadHeader = 0x84
    /// Device → central: epoch records: index of the first (u32), count (u8), records.
    case epochBatch = 0x85
    /// Device → central: a download ended: result.
    case downloadEnd = 0x86
    /// Device → central: raw acceleration: Unix time of the first sample
    /// (u32), its millisecond (u16), rate (u8), count (u8), int16 x/y/z triplets at 256 LSB/g.
    case rawBatch = 0x90
  }

  /// Results carried by `acknowledge` and `downloadEnd`.
  public enum Result: UInt8, Sendable {
    case ok = 0
    /// The device is busy with an epoch download.
    case busy = 1
    /// The device refused the configuration.
    case invalidConfiguration = 2
    /// The requested date range is not valid (start after stop).
    case dateError = 3
    /// No epochs logged in the requested range.
    case noData = 4
    /// The transfer failed before the end.
    case transferError = 5
    /// The device's SDK access is switched off: it takes no command from an SDK.
    case accessDisabled = 6
  }

  /// IMU flag bits of `setIMU`.
  public enum IMUFlag {
    public static let accelerometer: UInt8 = 0x01
    public static let gyroscope: UInt8 = 0x02
    public static let magnetometer: UInt8 = 0x04
    public static let temperature: UInt8 = 0x08
  }

  public var kind: UInt8
  public var payload: [UInt8]

  public init(_ kind: Kind, _ payload: [UInt8] = []) {
    self.kind = kind.rawValue
    self.payload = payload
  }

  public init(rawKind: UInt8, payload: [UInt8]) {
    self.kind = rawKind
    self.payload = payload
  }

  /// Header bytes before the payload.
  public static let headerLength = 3

  /// The message as bytes: type, length, payload.
  public var bytes: [UInt8] {
    [kind, UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)] + payload
  }

  /// The message split into chunks of at most `chunkSize` bytes.
  public func chunks(of chunkSize: Int) -> [[UInt8]] {
    let all = bytes
    let size = max(1, chunkSize)
    return stride(from: 0, to: all.count, by: size).map { Array(all[$0..<min($0 + size, all.count)]) }
  }
}

/// Joins chunks back into messages.
public struct LinkMessageAssembler: Sendable {
  private var buffer: [UInt8] = []

  public init() {}

  /// Adds a chunk; returns the messages it completed.
  public mutating func add(_ chunk: [UInt8]) -> [LinkMessage] {
    buffer += chunk
    var messages: [LinkMessage] = []
    while buffer.count >= LinkMessage.headerLength {
      guard let length = ByteReader.uint16(in: buffer, at: 1).map(Int.init) else { break }
      guard buffer.count >= LinkMessage.headerLength + length else { break }
      messages.append(
        LinkMessage(
          rawKind: buffer[0], payload: Array(buffer[LinkMessage.headerLength..<LinkMessage.headerLength + length])))
      buffer.removeFirst(LinkMessage.headerLength + length)
    }
    return messages
  }

  /// The type and announced payload length of the partial message waiting
  /// for more chunks, once its header is complete.
  public var pendingHeader: (kind: UInt8, length: Int)? {
    guard buffer.count >= LinkMessage.headerLength, let length = ByteReader.uint16(in: buffer, at: 1) else {
      return nil
    }
    return (buffer[0], Int(length))
  }

  /// Forgets a partial message.
  public mutating func reset() { buffer = [] }
}
