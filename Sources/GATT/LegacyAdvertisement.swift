/// Advertising data split into a 31-byte legacy advertisement and a 31-byte
/// scan response, as `AdvertisementData.legacyLayout()` computes it.
public struct LegacyAdvertisement: Hashable, Sendable {
  /// The advertisement's AD structures, flags first.
  public let advertisingData: [ADStructure]
  /// The scan response's AD structures (empty when everything fits in the advertisement).
  public let scanResponse: [ADStructure]

  /// The fields that went into the advertisement.
  public let advertisedFields: AdvertisementData
  /// The fields that went into the scan response.
  public let scanResponseFields: AdvertisementData
  /// Whether the local name had to be shortened to fit.
  public let isLocalNameShortened: Bool

  init(advertisingData: [ADStructure], scanResponse: [ADStructure], source: AdvertisementData) {
    self.advertisingData = advertisingData
    self.scanResponse = scanResponse
    advertisedFields = Self.fields(of: advertisingData, from: source)
    scanResponseFields = Self.fields(of: scanResponse, from: source)
    isLocalNameShortened = (advertisingData + scanResponse).contains {
      $0.type == .shortenedLocalName
    }
  }

  /// Bytes used in the advertisement (at most 31).
  public var advertisingDataSize: Int { advertisingData.reduce(0) { $0 + $1.size } }
  /// Bytes used in the scan response (at most 31).
  public var scanResponseSize: Int { scanResponse.reduce(0) { $0 + $1.size } }
  /// The advertisement as sent on air.
  public var advertisingDataBytes: [UInt8] { advertisingData.flatMap(\.bytes) }
  /// The scan response as sent on air.
  public var scanResponseBytes: [UInt8] { scanResponse.flatMap(\.bytes) }

  private static func fields(of structures: [ADStructure], from source: AdvertisementData)
    -> AdvertisementData
  {
    var fields = AdvertisementData()
    for structure in structures {
      switch structure.type {
      case .completeServiceUUIDs16, .completeServiceUUIDs32, .completeServiceUUIDs128:
        let width =
          structure.type == .completeServiceUUIDs16
          ? 2 : structure.type == .completeServiceUUIDs32 ? 4 : 16
        fields.serviceUUIDs += source.serviceUUIDs.filter {
          $0.shortestLittleEndianBytes.count == width && !fields.serviceUUIDs.contains($0)
        }
      case .serviceData16, .serviceData32, .serviceData128:
        for (uuid, data) in source.serviceData
        where uuid.shortestLittleEndianBytes + data == structure.data {
          fields.serviceData[uuid] = data
        }
      case .manufacturerSpecificData:
        let company = UInt16(structure.data[0]) | UInt16(structure.data[1]) << 8
        fields.manufacturerData[company] = Array(structure.data.dropFirst(2))
      case .appearance:
        fields.appearance = source.appearance
      case .txPowerLevel:
        fields.txPowerLevel = source.txPowerLevel
      case .completeLocalName, .shortenedLocalName:
        fields.localName = String(decoding: structure.data, as: UTF8.self)
      default:
        break
      }
    }
    return fields
  }

  /// Why advertising data does not fit a legacy advertisement and scan response.
  public struct LayoutError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What did not fit, and how much room was left.
    public var message: String

    public init(_ message: String) {
      self.message = message
    }

    public var description: String { "advertisement too large: \(message)" }
  }
}
