import GATT

/// A peripheral found in a capture: its address, what it advertised, its
/// GATT database, and every connection to it.
public struct CapturedPeripheral: Sendable {
  public var address: DeviceAddress
  public var advertisement: AdvertisementData
  /// Every connection's database merged (for a summary; each connection keeps its own).
  public var database: CapturedDatabase
  /// In capture order, each seen once (from the central's side when the
  /// capture has both sides of it).
  public var connections: [CapturedConnection]

  /// ATT PDUs over every connection.
  public var attPDUs: Int { connections.reduce(0) { $0 + $1.attPDUs } }

  /// One line for a list: address, name, connections and ATT traffic.
  public var summary: String {
    let name = advertisement.localName.map { " \"\($0)\"" } ?? ""
    return "\(address)\(name): \(connections.count) connection\(connections.count == 1 ? "" : "s"), "
      + "\(attPDUs) ATT PDU\(attPDUs == 1 ? "" : "s")"
  }
}
