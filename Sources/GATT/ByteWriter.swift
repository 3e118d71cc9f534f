/// Builds a packet from fixed-width values, little-endian: the counterpart
/// of ``ByteReader``.
///
/// ```swift
/// var packet = ByteWriter()
/// packet.append(UInt8(0x01))
/// packet.append(UInt32(unixSeconds))
/// connection.write(packet.bytes, …)
/// ```
@frozen
public struct ByteWriter: Sendable {
  @usableFromInline var storage: [UInt8]

  /// What was written so far.
  @inlinable public var bytes: [UInt8] { storage }

  @inlinable
  public init(_ bytes: [UInt8] = [], capacity: Int = 0) {
    storage = bytes
    storage.reserveCapacity(max(capacity, bytes.count))
  }

  /// Appends an integer, little-endian, in as many bytes as its type has.
  @inlinable
  public mutating func append<T: FixedWidthInteger>(_ value: T) {
    for index in 0..<(T.bitWidth / 8) { storage.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
  }

  /// Appends an IEEE 754 double, little-endian.
  @inlinable
  public mutating func append(_ value: Double) { append(value.bitPattern) }

  /// Appends bytes as they are.
  @inlinable
  public mutating func append(contentsOf more: some Sequence<UInt8>) { storage.append(contentsOf: more) }

  /// `value` little-endian, in as many bytes as its type has.
  @inlinable
  public static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    var writer = ByteWriter(capacity: T.bitWidth / 8)
    writer.append(value)
    return writer.storage
  }
}
