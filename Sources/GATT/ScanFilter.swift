/// Which advertising peripherals a scan reports.
///
/// Maps onto BlueZ `SetDiscoveryFilter` (`UUIDs`, `Pattern`).
public struct ScanFilter: Hashable, Sendable, Codable {
  /// Report only peripherals advertising at least one of these services; empty: any.
  public var serviceUUIDs: [BluetoothUUID]
  /// Report only peripherals whose local name starts with this; `nil`: any.
  public var namePrefix: String?

  public init(serviceUUIDs: [BluetoothUUID] = [], namePrefix: String? = nil) {
    self.serviceUUIDs = serviceUUIDs
    self.namePrefix = namePrefix
  }

  /// Every peripheral.
  public static let any = ScanFilter()

  /// Whether a peripheral advertising `advertisement` passes the filter.
  public func matches(_ advertisement: AdvertisementData) -> Bool {
    if !serviceUUIDs.isEmpty, !serviceUUIDs.contains(where: advertisement.serviceUUIDs.contains) {
      return false
    }
    if let namePrefix {
      guard let name = advertisement.localName, name.hasPrefix(namePrefix) else { return false }
    }
    return true
  }
}
