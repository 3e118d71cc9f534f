import GATT

/// The E4 emulation profile as the client uses it (Peripherals/E4/README.md):
/// where each stream lives.
public enum E4Profile {
  public static let sensorService = BluetoothUUID(0x3EA0)
  public static let commandService = BluetoothUUID(0x3E70)
  public static let statusService = BluetoothUUID(0x3EB0)
  public static let bvp = CharacteristicAddress(service: sensorService, characteristic: BluetoothUUID(0x3EA1))
  public static let acceleration = CharacteristicAddress(service: sensorService, characteristic: BluetoothUUID(0x3EA3))
  public static let temperature = CharacteristicAddress(service: sensorService, characteristic: BluetoothUUID(0x3EA6))
  public static let gsr = CharacteristicAddress(service: sensorService, characteristic: BluetoothUUID(0x3EA8))
  public static let ibi = CharacteristicAddress(service: sensorService, characteristic: BluetoothUUID(0x3EAA))
  public static let command = CharacteristicAddress(service: commandService, characteristic: BluetoothUUID(0x3E71))
  public static let control = CharacteristicAddress(service: statusService, characteristic: BluetoothUUID(0x3EB2))
  public static let battery = CharacteristicAddress(service: statusService, characteristic: BluetoothUUID(0x3EB3))

  /// The characteristics the client subscribes to.
  public static let notifying = [bvp, acceleration, temperature, gsr, ibi, control, battery]

  /// What the wristband advertises as its name.
  public static let advertisedName = "Empatica E4"

  /// The start command: `0x01`, uint32 LE Unix seconds, uint16 LE milliseconds.
  public static func startCommand(unixTime: Double) -> [UInt8] {
    let seconds = UInt32(clamping: Int64(unixTime.rounded(.down)))
    let milliseconds = UInt16(min(999, max(0, ((unixTime - Double(seconds)) * 1000).rounded(.down))))
    var command = ByteWriter([0x01], capacity: 7)
    command.append(seconds)
    command.append(milliseconds)
    return command.bytes
  }

  /// The time a start command carries (what the wristband sets its clock to).
  public static func time(ofStartCommand command: [UInt8]) -> Double {
    var reader = ByteReader(command, at: 1)
    let seconds = reader.uint32() ?? 0
    let milliseconds = reader.uint16() ?? 0
    return Double(seconds) + Double(milliseconds) / 1000
  }

  /// The stop command.
  public static let stopCommand: [UInt8] = [0x02]
}
