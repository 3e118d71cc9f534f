/// Reads the fixed-width values of a packet in order — little-endian unless
/// a method says otherwise — the one place device models and client stacks
/// take integers out of bytes. A read past the end returns `nil` and moves
/// nothing, so a short or hostile packet is a value to refuse, never a crash.
///
/// ```swift
/// var reader = ByteReader(packet)
/// guard let index = reader.uint32(), let first = reader.int16() else { return nil }
/// ```
@frozen
public struct ByteReader: Sendable {
  public let bytes: [UInt8]
  @usableFromInline var position: Int

  /// Where the next read starts.
  @inlinable public var offset: Int { position }

  @inlinable
  public init(_ bytes: [UInt8], at offset: Int = 0) {
    self.bytes = bytes
    self.position = max(0, offset)
  }

  /// Bytes not read yet.
  @inlinable
  public var remaining: Int { max(0, bytes.count - position) }

  @inlinable public mutating func uint8() -> UInt8? { integer(UInt8.self) }
  @inlinable
  public mutating func int8() -> Int8? { integer(Int8.self) }
  @inlinable
  public mutating func uint16() -> UInt16? { integer(UInt16.self) }
  @inlinable
  public mutating func int16() -> Int16? { integer(Int16.self) }
  @inlinable
  public mutating func uint32() -> UInt32? { integer(UInt32.self) }
  @inlinable
  public mutating func uint64() -> UInt64? { integer(UInt64.self) }

  /// An IEEE 754 double, little-endian.
  @inlinable
  public mutating func float64() -> Double? { uint64().map(Double.init(bitPattern:)) }

  /// A 24-bit unsigned integer, big-endian (the E4's EDA samples).
  @inlinable
  public mutating func uint24BigEndian() -> UInt32? {
    guard remaining >= 3 else { return nil }
    defer { position += 3 }
    return UInt32(bytes[position]) << 16 | UInt32(bytes[position + 1]) << 8 | UInt32(bytes[position + 2])
  }

  /// The next `count` bytes.
  @inlinable
  public mutating func bytes(_ count: Int) -> [UInt8]? {
    guard count >= 0, remaining >= count else { return nil }
    defer { position += count }
    return Array(bytes[position..<position + count])
  }

  /// The little-endian UInt16 at `offset` of `bytes`, without a reader.
  @inlinable
  public static func uint16(in bytes: [UInt8], at offset: Int) -> UInt16? {
    var reader = ByteReader(bytes, at: offset)
    return reader.uint16()
  }

  /// The little-endian UInt32 at `offset` of `bytes`, without a reader.
  @inlinable
  public static func uint32(in bytes: [UInt8], at offset: Int) -> UInt32? {
    var reader = ByteReader(bytes, at: offset)
    return reader.uint32()
  }

  @inlinable
  mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
    let size = T.bitWidth / 8
    guard remaining >= size else { return nil }
    var value = T.zero
    for index in 0..<size { value |= T(truncatingIfNeeded: bytes[position + index]) << (8 * index) }
    position += size
    return value
  }
}
