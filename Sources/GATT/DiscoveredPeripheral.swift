/// A peripheral seen by a scan.
public struct DiscoveredPeripheral: Hashable, Sendable {
  /// What to pass to `CentralLink.connect`.
  public var id: PeripheralID
  /// Signal strength in dBm.
  public var rssi: Int
  /// Advertising data merged with the scan response.
  public var advertisement: AdvertisementData

  public init(id: PeripheralID, rssi: Int, advertisement: AdvertisementData) {
    self.id = id
    self.rssi = rssi
    self.advertisement = advertisement
  }

  /// The advertised local name.
  public var name: String? { advertisement.localName }
}
