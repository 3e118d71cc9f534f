/// HCI disconnection reason codes as people read them.
public enum DisconnectionReason {
  /// The code in hex with its meaning, when it is a common one: `0x08 (connection timeout (link lost))`.
  public static func describe(_ code: UInt8) -> String {
    let names: [UInt8: String] = [
      0x05: "authentication failure", 0x08: "connection timeout (link lost)", 0x13: "remote user terminated",
      0x14: "remote device terminated (low resources)", 0x15: "remote device terminated (power off)",
      0x16: "terminated by the local host", 0x22: "LL response timeout", 0x3B: "unacceptable connection parameters",
      0x3D: "MIC failure", 0x3E: "connection failed to be established",
    ]
    return "0x" + String(format2: code) + (names[code].map { " (\($0))" } ?? "")
  }
}

extension String {
  init(format2 byte: UInt8) {
    let text = String(byte, radix: 16)
    self = text.count == 1 ? "0" + text : text
  }
}
