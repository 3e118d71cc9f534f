/// What a peripheral advertises, as a central sees it after a scan (advertising
/// data and scan response merged).
///
/// A legacy advertisement holds 31 bytes, and so does a scan response: use
/// `legacyPayloadSize` and `legacyLayout()` to see what fits where.
public struct AdvertisementData: Hashable, Sendable, Codable {
  /// The complete local name.
  public var localName: String?
  /// Advertised service UUIDs, in order.
  public var serviceUUIDs: [BluetoothUUID]
  /// Manufacturer-specific data by company identifier.
  public var manufacturerData: [UInt16: [UInt8]]
  /// Service data by service UUID.
  public var serviceData: [BluetoothUUID: [UInt8]]
  /// GAP appearance.
  public var appearance: UInt16?
  /// TX power level in dBm.
  public var txPowerLevel: Int8?

  public init(
    localName: String? = nil,
    serviceUUIDs: [BluetoothUUID] = [],
    manufacturerData: [UInt16: [UInt8]] = [:],
    serviceData: [BluetoothUUID: [UInt8]] = [:],
    appearance: UInt16? = nil,
    txPowerLevel: Int8? = nil
  ) {
    self.localName = localName
    self.serviceUUIDs = serviceUUIDs
    self.manufacturerData = manufacturerData
    self.serviceData = serviceData
    self.appearance = appearance
    self.txPowerLevel = txPowerLevel
  }

  /// The bytes a legacy advertising PDU can carry, and a scan response too.
  public static let legacyCapacity = 31

  /// The AD structures for these fields, without flags, in the order they are
  /// placed: service UUID lists (16-, 32-, then 128-bit), service data,
  /// manufacturer data, appearance, TX power, local name.
  public var structures: [ADStructure] {
    var result: [ADStructure] = []
    var seen: Set<BluetoothUUID> = []
    let uuids = serviceUUIDs.filter { seen.insert($0).inserted }
    let lists: [(Int, ADStructure.DataType)] = [
      (2, .completeServiceUUIDs16), (4, .completeServiceUUIDs32), (16, .completeServiceUUIDs128),
    ]
    for (width, type) in lists {
      let group = uuids.filter { $0.shortestLittleEndianBytes.count == width }
      if !group.isEmpty {
        result.append(ADStructure(type, group.flatMap(\.shortestLittleEndianBytes)))
      }
    }
    for (uuid, data) in serviceData.sorted(by: { $0.key < $1.key }) {
      let uuidBytes = uuid.shortestLittleEndianBytes
      let type: ADStructure.DataType =
        switch uuidBytes.count {
        case 2: .serviceData16
        case 4: .serviceData32
        default: .serviceData128
        }
      result.append(ADStructure(type, uuidBytes + data))
    }
    for (company, data) in manufacturerData.sorted(by: { $0.key < $1.key }) {
      let companyBytes = [
        UInt8(truncatingIfNeeded: company), UInt8(truncatingIfNeeded: company >> 8),
      ]
      result.append(ADStructure(.manufacturerSpecificData, companyBytes + data))
    }
    if let appearance {
      result.append(
        ADStructure(
          .appearance,
          [UInt8(truncatingIfNeeded: appearance), UInt8(truncatingIfNeeded: appearance >> 8)]))
    }
    if let txPowerLevel {
      result.append(ADStructure(.txPowerLevel, [UInt8(bitPattern: txPowerLevel)]))
    }
    if let localName {
      result.append(ADStructure(.completeLocalName, Array(localName.utf8)))
    }
    return result
  }

  /// Bytes all fields take on air in one legacy advertisement, including the
  /// 3 bytes of flags a connectable peripheral sends. More than 31 means some
  /// fields must go into the scan response (see `legacyLayout()`).
  public var legacyPayloadSize: Int {
    ADStructure.discoverableFlags.size + structures.reduce(0) { $0 + $1.size }
  }

  /// Whether everything, flags included, fits in one 31-byte legacy advertisement.
  public var fitsLegacyAdvertisement: Bool { legacyPayloadSize <= Self.legacyCapacity }

  /// Splits the fields into a legacy advertisement and a scan response.
  ///
  /// Flags always go first into the advertisement. Then, in the order of
  /// `structures`, each field goes into the advertisement if it fits, else
  /// into the scan response if it fits there. Service UUIDs come first so that
  /// a central filtering on them (even a passive scanner) sees them. A local
  /// name that fits nowhere is shortened (AD type "shortened local name") into
  /// the larger remaining space; any other field that fits nowhere is an error.
  public func legacyLayout() throws(LegacyAdvertisement.LayoutError) -> LegacyAdvertisement {
    var advertising = [ADStructure.discoverableFlags]
    var scanResponse: [ADStructure] = []
    func room(_ packet: [ADStructure]) -> Int {
      Self.legacyCapacity - packet.reduce(0) { $0 + $1.size }
    }
    for structure in structures {
      if structure.size <= room(advertising) {
        advertising.append(structure)
      } else if structure.size <= room(scanResponse) {
        scanResponse.append(structure)
      } else if structure.type == .completeLocalName, let localName {
        let advertisingRoom = room(advertising)
        let scanResponseRoom = room(scanResponse)
        let space = max(advertisingRoom, scanResponseRoom) - 2
        let shortened = Self.utf8Prefix(of: localName, maximumBytes: space)
        guard !shortened.isEmpty else {
          throw LegacyAdvertisement.LayoutError(
            "no room left for even one character of the local name \"\(localName)\"")
        }
        let short = ADStructure(.shortenedLocalName, Array(shortened.utf8))
        if advertisingRoom >= scanResponseRoom {
          advertising.append(short)
        } else {
          scanResponse.append(short)
        }
      } else {
        throw LegacyAdvertisement.LayoutError(
          "\(structure.type) (\(structure.size) bytes) fits in neither the advertisement"
            + " (\(room(advertising)) bytes left) nor the scan response (\(room(scanResponse)) bytes left)"
        )
      }
    }
    return LegacyAdvertisement(
      advertisingData: advertising, scanResponse: scanResponse, source: self)
  }

  /// These fields with `other`'s added (a scan response merged into an advertisement).
  public func merging(_ other: AdvertisementData) -> AdvertisementData {
    var merged = self
    merged.localName = localName ?? other.localName
    merged.serviceUUIDs += other.serviceUUIDs.filter { !serviceUUIDs.contains($0) }
    merged.manufacturerData.merge(other.manufacturerData) { mine, _ in mine }
    merged.serviceData.merge(other.serviceData) { mine, _ in mine }
    merged.appearance = appearance ?? other.appearance
    merged.txPowerLevel = txPowerLevel ?? other.txPowerLevel
    return merged
  }

  private static func utf8Prefix(of string: String, maximumBytes: Int) -> String {
    var result = ""
    var count = 0
    for character in string {
      let size = character.utf8.count
      guard count + size <= maximumBytes else { break }
      result.append(character)
      count += size
    }
    return result
  }
}
