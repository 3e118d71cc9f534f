import GATT

/// A peripheral found in a capture: its address, what it advertised, its
/// GATT database, and every connection to it.
public struct CapturedPeripheral: Sendable {
  public var address: DeviceAddress
  /// What it advertised before its first connection (or last, when it was never connected).
  public var advertisement: AdvertisementData
  /// Every change of its advertising data or scan response, in capture order.
  public var advertisements: [CapturedAdvertisement] = []
  /// Every connection's database merged (for a summary; each connection keeps its own).
  public var database: CapturedDatabase
  /// In capture order, each seen once (from the central's side when the
  /// capture has both sides of it).
  public var connections: [CapturedConnection]

  /// What it advertised just before `time`: the last advertising data and
  /// scan response before it (the first after it when there are none before),
  /// since one address may advertise different devices over a capture.
  public func advertisement(at time: Int64) -> AdvertisementData {
    func last(_ scanResponse: Bool) -> AdvertisementData? {
      let kind = advertisements.filter { $0.isScanResponse == scanResponse }
      return (kind.last { $0.time <= time } ?? kind.first)?.data
    }
    return (last(false) ?? AdvertisementData()).merging(last(true) ?? AdvertisementData())
  }

  /// ATT PDUs over every connection.
  public var attPDUs: Int { connections.reduce(0) { $0 + $1.attPDUs } }

  /// One line for a list: address, name, connections and ATT traffic.
  public var summary: String {
    let name = advertisement.localName.map { " \"\($0)\"" } ?? ""
    return "\(address)\(name): \(connections.count) connection\(connections.count == 1 ? "" : "s"), "
      + "\(attPDUs) ATT PDU\(attPDUs == 1 ? "" : "s")"
  }
}
