/// A Bluetooth device address, `00:AA:01:00:00:23` (most significant byte first).
public struct DeviceAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The six bytes, most significant first.
  public let bytes: [UInt8]

  /// From the six bytes as HCI carries them (least significant first).
  public init(littleEndian bytes: some Collection<UInt8>) {
    self.bytes = Array(bytes.reversed())
  }

  /// From text like `00:AA:01:00:00:23` (either case); `nil` otherwise.
  public init?(_ text: String) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 6 else { return nil }
    var bytes: [UInt8] = []
    for part in parts {
      guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
      bytes.append(byte)
    }
    self.bytes = bytes
  }

  public var description: String {
    bytes.map { byte in
      let text = String(byte, radix: 16, uppercase: true)
      return text.count == 1 ? "0" + text : text
    }.joined(separator: ":")
  }

  public static func < (lhs: DeviceAddress, rhs: DeviceAddress) -> Bool {
    lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
  }
}
