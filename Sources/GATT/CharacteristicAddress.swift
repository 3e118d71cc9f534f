/// Where a characteristic lives: its service's UUID and its own.
///
/// This is how both seams name a characteristic; transports map it to their
/// own handles (ATT handles, BlueZ object paths).
public struct CharacteristicAddress: Hashable, Comparable, Sendable, Codable,
  CustomStringConvertible
{
  /// The UUID of the service that holds the characteristic.
  public var service: BluetoothUUID
  /// The characteristic's UUID.
  public var characteristic: BluetoothUUID

  public init(service: BluetoothUUID, characteristic: BluetoothUUID) {
    self.service = service
    self.characteristic = characteristic
  }

  public static func < (lhs: CharacteristicAddress, rhs: CharacteristicAddress) -> Bool {
    (lhs.service, lhs.characteristic) < (rhs.service, rhs.characteristic)
  }

  /// `service/characteristic`, each in its short form where it has one.
  public var description: String { "\(service)/\(characteristic)" }
}
