import BlendMicroClient
import BlueZ
import DBus
import GATT

/// What one lab test hosts and opens, torn down whatever the test's outcome,
/// so that a failing test leaves nothing registered for the next one.
actor LabSession {
  private var buses: [DBusConnection] = []
  private var peripherals: [BlueZPeripheral] = []
  private var clients: [BlendMicroClient] = []
  private var connections: [any CentralConnection] = []

  /// A new bus connection and the lab's adapter number `index`.
  func adapter(_ index: Int) async throws -> (DBusConnection, BluetoothAdapter) {
    let (bus, adapter) = try await Lab.adapter(index)
    buses.append(bus)
    return (bus, adapter)
  }

  func host(_ model: any PeripheralModel, on index: Int, name: String, notificationSockets: Bool = true)
    async throws -> BlueZPeripheral
  {
    let (bus, adapter) = try await self.adapter(index)
    let peripheral = try await BlueZPeripheral.host(
      model, on: adapter, bus: bus, name: name, notificationSockets: notificationSockets)
    peripherals.append(peripheral)
    return peripheral
  }

  func central(on index: Int) async throws -> BlueZCentral {
    let (bus, adapter) = try await self.adapter(index)
    return BlueZCentral(adapter: adapter, bus: bus)
  }

  func blendMicroClient(on index: Int) async throws -> BlendMicroClient {
    let client = BlendMicroClient(link: try await central(on: index))
    clients.append(client)
    return client
  }

  func keep(_ connection: any CentralConnection) { connections.append(connection) }

  func close() async {
    for client in clients { await client.disconnect() }
    for connection in connections { await connection.disconnect() }
    for peripheral in peripherals { await peripheral.stop() }
    for bus in buses { await bus.close() }
  }

  /// Runs `body` with a fresh session and always closes it.
  static func run<T: Sendable>(_ body: (LabSession) async throws -> T) async throws -> T {
    let session = LabSession()
    do {
      let result = try await body(session)
      await session.close()
      return result
    } catch {
      await session.close()
      throw error
    }
  }
}
