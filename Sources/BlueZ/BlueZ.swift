import DBus

/// Names of BlueZ's D-Bus API (`org.bluez`), as BlueZ 5.66 and later use them.
public enum BlueZ {
  public static let service = "org.bluez"
  public static let root = ObjectPath.root
  public static let adapterInterface = "org.bluez.Adapter1"
  public static let deviceInterface = "org.bluez.Device1"
  public static let gattManagerInterface = "org.bluez.GattManager1"
  public static let advertisingManagerInterface = "org.bluez.LEAdvertisingManager1"
  public static let gattServiceInterface = "org.bluez.GattService1"
  public static let gattCharacteristicInterface = "org.bluez.GattCharacteristic1"
  public static let gattDescriptorInterface = "org.bluez.GattDescriptor1"
  public static let advertisementInterface = "org.bluez.LEAdvertisement1"
  static let propertiesInterface = "org.freedesktop.DBus.Properties"
  static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

  /// `00:AA:01:00:00:00` → `dev_00_AA_01_00_00_00`.
  static func deviceElement(for address: String) -> String {
    "dev_" + address.uppercased().replacingOccurrences(of: ":", with: "_")
  }

  /// The address of a device object (`…/dev_00_AA_01_00_00_00`), if the path is one.
  static func address(ofDevice path: ObjectPath) -> String? {
    guard let element = path.rawValue.split(separator: "/").first(where: { $0.hasPrefix("dev_") }) else { return nil }
    return element.dropFirst(4).replacingOccurrences(of: "_", with: ":")
  }
}
