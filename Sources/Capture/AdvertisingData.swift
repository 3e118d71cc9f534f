import GATT

/// Advertising data as it travels (AD structures: length, type, data) read
/// into `AdvertisementData`. Structures this does not use are skipped; a
/// structure whose length runs past the data ends the reading there.
enum AdvertisingData {
  static func parse(_ bytes: [UInt8]) -> AdvertisementData {
    var data = AdvertisementData()
    var reader = ByteReader(bytes)
    while let length = reader.uint8(), length > 0, let type = reader.uint8(),
      let body = reader.bytes(Int(length) - 1)
    {
      switch ADStructure.DataType(rawValue: type) {
      case .completeLocalName:
        data.localName = String(decoding: body, as: UTF8.self)
      case .shortenedLocalName:
        data.localName = data.localName ?? String(decoding: body, as: UTF8.self)
      case .incompleteServiceUUIDs16, .completeServiceUUIDs16:
        data.serviceUUIDs += uuids(body, width: 2).filter { !data.serviceUUIDs.contains($0) }
      case .incompleteServiceUUIDs32, .completeServiceUUIDs32:
        data.serviceUUIDs += uuids(body, width: 4).filter { !data.serviceUUIDs.contains($0) }
      case .incompleteServiceUUIDs128, .completeServiceUUIDs128:
        data.serviceUUIDs += uuids(body, width: 16).filter { !data.serviceUUIDs.contains($0) }
      case .serviceData16 where body.count >= 2:
        if let uuid = uuid(body.prefix(2)) { data.serviceData[uuid] = Array(body.dropFirst(2)) }
      case .serviceData32 where body.count >= 4:
        if let uuid = uuid(body.prefix(4)) { data.serviceData[uuid] = Array(body.dropFirst(4)) }
      case .serviceData128 where body.count >= 16:
        if let uuid = uuid(body.prefix(16)) { data.serviceData[uuid] = Array(body.dropFirst(16)) }
      case .manufacturerSpecificData where body.count >= 2:
        data.manufacturerData[UInt16(body[0]) | UInt16(body[1]) << 8] = Array(body.dropFirst(2))
      case .appearance where body.count == 2:
        data.appearance = UInt16(body[0]) | UInt16(body[1]) << 8
      case .txPowerLevel where body.count == 1:
        data.txPowerLevel = Int8(bitPattern: body[0])
      default:
        break
      }
    }
    return data
  }

  /// A UUID from its 2, 4 or 16 little-endian bytes, as ATT and advertising carry them.
  static func uuid(_ bytes: some Collection<UInt8>) -> BluetoothUUID? {
    let bytes = Array(bytes)
    switch bytes.count {
    case 2: return BluetoothUUID(UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
    case 4:
      return BluetoothUUID(
        alias32: UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24)
    case 16: return BluetoothUUID(bytes: bytes.reversed())
    default: return nil
    }
  }

  private static func uuids(_ body: [UInt8], width: Int) -> [BluetoothUUID] {
    stride(from: 0, to: body.count - width + 1, by: width).compactMap { uuid(body[$0..<$0 + width]) }
  }
}
