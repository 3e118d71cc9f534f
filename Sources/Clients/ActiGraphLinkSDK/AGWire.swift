import GATT

/// The emulation profile as the SDK speaks it (Peripherals/ActiGraphLink/README.md):
/// UUIDs, message types, framing.
enum AGWire {
  static let service = BluetoothUUID(high: 0x5A6C_0001_7E3A_4B8D, low: 0x9F21_AC7A_61A4_E000)
  static let command = CharacteristicAddress(
    service: service, characteristic: BluetoothUUID(high: 0x5A6C_0002_7E3A_4B8D, low: 0x9F21_AC7A_61A4_E000))
  static let response = CharacteristicAddress(
    service: service, characteristic: BluetoothUUID(high: 0x5A6C_0003_7E3A_4B8D, low: 0x9F21_AC7A_61A4_E000))

  enum Kind: UInt8 {
    case getStatus = 0x01
    case setRawStream = 0x02
    case setIMU = 0x03
    case downloadEpochs = 0x04
    case acknowledge = 0x80
    case status = 0x81
    case downloadHeader = 0x84
    case epochBatch = 0x85
    case downloadEnd = 0x86
    case rawBatch = 0x90
  }

  enum Result: UInt8 {
    case ok = 0
    case busy
    case invalidConfiguration
    case dateError
    case noData
    case transferError
    case accessDisabled
  }

  static let rawCountsPerG = 256.0
  static let epochRecordLength = 9

  /// A message as bytes: type, u16 LE length, payload.
  static func frame(_ kind: Kind, _ payload: [UInt8] = []) -> [UInt8] {
    var frame = ByteWriter(capacity: 3 + payload.count)
    frame.append(kind.rawValue)
    frame.append(UInt16(clamping: payload.count))
    frame.append(contentsOf: payload)
    return frame.bytes
  }
}

/// Joins notification chunks into (type, payload) messages.
struct AGAssembler {
  private var buffer: [UInt8] = []

  mutating func add(_ chunk: [UInt8]) -> [(kind: UInt8, payload: [UInt8])] {
    buffer += chunk
    var messages: [(kind: UInt8, payload: [UInt8])] = []
    while buffer.count >= 3 {
      guard let length = ByteReader.uint16(in: buffer, at: 1).map(Int.init) else { break }
      guard buffer.count >= 3 + length else { break }
      messages.append((buffer[0], Array(buffer[3..<3 + length])))
      buffer.removeFirst(3 + length)
    }
    return messages
  }
}
