import BlueZ
import DBus
import Foundation
import Testing

/// The virtual BLE lab these tests run in (ci/lab sets the environment).
enum Lab {
  static let environment = ProcessInfo.processInfo.environment
  /// Whether this process runs inside `ci/lab`.
  static var isActive: Bool { environment["DOPPEL_LAB"] == "1" }
  /// The lab's controllers, e.g. `["hci0", "hci1"]`.
  static var adapterNames: [String] {
    (environment["DOPPEL_ADAPTERS"] ?? "").split(separator: " ").map(String.init)
  }

  /// A new connection to the lab's system bus, and the adapter called `name`.
  static func adapter(_ index: Int) async throws -> (DBusConnection, BluetoothAdapter) {
    let bus = try await DBusConnection.connect(to: .system)
    let adapter = try await BluetoothAdapter.find(adapterNames[index], on: bus)
    return (bus, adapter)
  }
}

/// Every lab suite nests in this one so that they run one after another:
/// they share the lab's adapters.
@Suite(.enabled(if: Lab.isActive, "runs inside ci/lab"), .serialized)
struct LabTests {}
