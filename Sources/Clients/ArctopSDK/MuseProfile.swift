import GATT

/// The Muse's GATT layout as the client knows it: the Interaxon service and
/// the `273e00NN-4c4d-454d-96be-f03bac821358` characteristics.
public enum MuseProfile {
  public static let service = BluetoothUUID(0xFE8D)
  public static let control = address(0x0001)
  public static let accelerometer = address(0x000A)
  public static let telemetry = address(0x000B)
  /// The four EEG sensors the SDK reports on, TP9, AF7, AF8, TP10 (`273e0003`…`0006`).
  public static let eeg = (0..<4).map { address(UInt16(0x0003 + $0)) }
  /// The sensors' names, in the order of `eeg`.
  public static let sensorNames = ["TP9", "AF7", "AF8", "TP10"]

  static func address(_ number: UInt16) -> CharacteristicAddress {
    let hex = String(number, radix: 16)
    // The text is a valid UUID for every number; a failure here is a programming error.
    let uuid = try! BluetoothUUID(
      string: "273e" + String(repeating: "0", count: 4 - hex.count) + hex + "-4c4d-454d-96be-f03bac821358")
    return CharacteristicAddress(service: service, characteristic: uuid)
  }
}
