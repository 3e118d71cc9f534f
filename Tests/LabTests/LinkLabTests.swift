import BlendMicro
import BlendMicroClient
import BlueZ
import DBus
import GATT
import Testing

extension LabTests {
  /// Connections, disconnects and several devices, through bluetoothd.
  @Suite(.timeLimit(.minutes(3)))
  struct LinkLabTests {
    /// Hosts `model` on adapter 0 and connects a client on adapter 1.
    func connect(_ model: RecordingModel) async throws -> (
      BlueZPeripheral, BlendMicroClient, [DBusConnection]
    ) {
      let (peripheralBus, hci0) = try await Lab.adapter(0)
      let hosted = try await BlueZPeripheral.host(
        model, on: hci0, bus: peripheralBus, name: "link0")
      let (centralBus, hci1) = try await Lab.adapter(1)
      let client = BlendMicroClient(link: BlueZCentral(adapter: hci1, bus: centralBus))
      try await client.connect(timeout: .seconds(60))
      return (hosted, client, [peripheralBus, centralBus])
    }

    @Test func clientDisconnectIsReportedToThePeripheral() async throws {
      let model = RecordingModel(BlendMicro())
      let (hosted, client, buses) = try await connect(model)
      let readings = try await client.readings()
      var iterator = readings.makeAsyncIterator()
      _ = try await iterator.next()
      try await model.waitFor("the subscription") {
        if case .subscribed(_, true) = $0 { true } else { false }
      }
      await client.disconnect()
      try await model.waitFor("the central's disconnect") {
        if case .disconnected(_, .remote) = $0 { true } else { false }
      }
      await hosted.stop()
      for bus in buses { await bus.close() }
    }

    @Test func peripheralDisconnectIsReportedToTheClient() async throws {
      let model = RecordingModel(BlendMicro())
      let (hosted, client, buses) = try await connect(model)
      let readings = try await client.readings()
      var iterator = readings.makeAsyncIterator()
      _ = try await iterator.next()
      let states = await client.states()
      let central = try #require(await hosted.connectedCentrals.first)
      await hosted.disconnect(central)
      var ending: String?
      do {
        while try await iterator.next() != nil {}
        ending = "finished without error"
      } catch let error as GATTError {
        #expect(error.code == .disconnected(.remote), "\(error)")
      }
      #expect(ending == nil)
      for await state in states {
        if case .disconnected(let reason) = state {
          #expect(reason == .remote)
          break
        }
      }
      try await model.waitFor("its own disconnect") {
        if case .disconnected(_, .local) = $0 { true } else { false }
      }
      await hosted.stop()
      for bus in buses { await bus.close() }
    }

    @Test func twoDevicesOnOneAdapterStreamAtTheSameTime() async throws {
      let (peripheralBus, hci0) = try await Lab.adapter(0)
      let board = try await BlueZPeripheral.host(
        BlendMicro(), on: hci0, bus: peripheralBus, name: "board")
      let thermometer = try await BlueZPeripheral.host(
        Thermometer(), on: hci0, bus: peripheralBus, name: "thermo")
      let (centralBus, hci1) = try await Lab.adapter(1)
      let central = BlueZCentral(adapter: hci1, bus: centralBus)
      // Each advertisement is found by its own service.
      var scan = central.scan(filter: ScanFilter(serviceUUIDs: [Thermometer.service]))
        .makeAsyncIterator()
      let found = try #require(await scan.next())
      #expect(found.id.rawValue == hci0.address)
      let connection = try await central.connect(found.id, timeout: .seconds(60))
      let services = try await connection.discoverServices().map(\.uuid)
      #expect(services.contains(Thermometer.service))
      #expect(services.contains(BlendMicro.uartService))
      var temperatures = try await connection.notifications(of: Thermometer.measurement)
        .makeAsyncIterator()
      var ecg = try await connection.notifications(of: BlendMicro.tx).makeAsyncIterator()
      var ecgCount = 0
      var temperatureCount = 0
      for _ in 0..<10 {
        if try await ecg.next() != nil { ecgCount += 1 }
        if try await temperatures.next() != nil { temperatureCount += 1 }
      }
      #expect(ecgCount == 10 && temperatureCount == 10)
      await connection.disconnect()
      await board.stop()
      await thermometer.stop()
      await centralBus.close()
      await peripheralBus.close()
    }

    @Test(.enabled(if: Lab.adapterNames.count >= 3, "needs a third adapter"))
    func devicesOnTwoAdaptersStreamToOneClient() async throws {
      let (busA, hci0) = try await Lab.adapter(0)
      let (busB, hci2) = try await Lab.adapter(2)
      let first = try await BlueZPeripheral.host(
        BlendMicro(name: "BoardA"), on: hci0, bus: busA, name: "a")
      let second = try await BlueZPeripheral.host(
        BlendMicro(name: "BoardB"), on: hci2, bus: busB, name: "b")
      let (centralBus, hci1) = try await Lab.adapter(1)
      let clientA = BlendMicroClient(link: BlueZCentral(adapter: hci1, bus: centralBus))
      let clientB = BlendMicroClient(link: BlueZCentral(adapter: hci1, bus: centralBus))
      let foundA = try await clientA.connect(namePrefix: "BoardA", timeout: .seconds(60))
      let foundB = try await clientB.connect(namePrefix: "BoardB", timeout: .seconds(60))
      #expect(foundA.id.rawValue == hci0.address)
      #expect(foundB.id.rawValue == hci2.address)
      var a = try await clientA.readings().makeAsyncIterator()
      var b = try await clientB.readings().makeAsyncIterator()
      for _ in 0..<20 {
        #expect(try await a.next() != nil)
        #expect(try await b.next() != nil)
      }
      await clientA.disconnect()
      await clientB.disconnect()
      await first.stop()
      await second.stop()
      for bus in [busA, busB, centralBus] { await bus.close() }
    }
  }
}
