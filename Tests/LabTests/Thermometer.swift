import GATT

/// A minimal second device for the lab tests: the Health Thermometer service
/// notifying a counter-derived temperature every 100 ms while subscribed.
actor Thermometer: PeripheralModel {
  static let service = BluetoothUUID(0x1809)
  static let measurement = CharacteristicAddress(
    service: service, characteristic: BluetoothUUID(0x2A1E))

  nonisolated let profile = try! GATTProfile([
    ServiceDefinition(
      service, name: "Health Thermometer",
      characteristics: [
        CharacteristicDefinition(
          BluetoothUUID(0x2A1E), name: "Intermediate Temperature", properties: [.notify])
      ])
  ])
  nonisolated let advertisement = AdvertisementData(localName: "Thermo", serviceUUIDs: [service])
  private var task: Task<Void, Never>?

  func subscriptionChanged(
    characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool
  ) async {
    task?.cancel()
    task = nil
    guard subscribed else { return }
    let host = self.host
    task = Task {
      guard let host else { return }
      var n: UInt8 = 0
      while !Task.isCancelled {
        try? await host.clock.sleep(for: .milliseconds(100), tolerance: nil)
        try? await host.notify([n], characteristic: Self.measurement)
        n &+= 1
      }
    }
  }

  private var host: (any PeripheralHost)?
  func start(host: any PeripheralHost) async { self.host = host }
  func stop() async { task?.cancel() }
}
