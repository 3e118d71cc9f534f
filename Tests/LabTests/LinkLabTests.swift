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
    @Test func clientDisconnectIsReportedToThePeripheral() async throws {
      try await LabSession.run { lab in
        let model = RecordingModel(BlendMicro())
        _ = try await lab.host(model, on: 0, name: "link0")
        let client = try await lab.blendMicroClient(on: 1)
        try await client.connect(timeout: .seconds(60))
        var readings = try await client.readings().makeAsyncIterator()
        _ = try await readings.next()
        try await model.waitFor("the subscription") { if case .subscribed(_, true) = $0 { true } else { false } }
        await client.disconnect()
        try await model.waitFor("the central's disconnect") {
          if case .disconnected(_, .remote) = $0 { true } else { false }
        }
      }
    }

    @Test func peripheralDisconnectIsReportedToTheClient() async throws {
      try await LabSession.run { lab in
        let model = RecordingModel(BlendMicro())
        let hosted = try await lab.host(model, on: 0, name: "link1")
        let client = try await lab.blendMicroClient(on: 1)
        try await client.connect(timeout: .seconds(60))
        var readings = try await client.readings().makeAsyncIterator()
        _ = try await readings.next()
        let states = await client.states()
        let central = try #require(await hosted.connectedCentrals.first)
        await hosted.disconnect(central)
        do {
          while try await readings.next() != nil {}
          Issue.record("the stream finished without an error")
        } catch let error as GATTError {
          #expect(error.code == .disconnected(.remote), "\(error)")
        }
        for await state in states {
          if case .disconnected(let reason) = state {
            #expect(reason == .remote)
            break
          }
        }
        try await model.waitFor("its own disconnect") { if case .disconnected(_, .local) = $0 { true } else { false } }
      }
    }

    @Test func twoDevicesOnOneAdapterStreamAtTheSameTime() async throws {
      try await LabSession.run { lab in
        _ = try await lab.host(BlendMicro(), on: 0, name: "board")
        _ = try await lab.host(Thermometer(), on: 0, name: "thermo")
        let central = try await lab.central(on: 1)
        // The thermometer's own advertisement is found by its service.
        var scan = central.scan(filter: ScanFilter(serviceUUIDs: [Thermometer.service])).makeAsyncIterator()
        let found = try #require(await scan.next())
        let connection = try await central.connect(found.id, timeout: .seconds(60))
        await lab.keep(connection)
        let services = try await connection.discoverServices().map(\.uuid)
        #expect(services.contains(Thermometer.service))
        #expect(services.contains(BlendMicro.uartService))
        var temperatures = try await connection.notifications(of: Thermometer.measurement).makeAsyncIterator()
        var ecg = try await connection.notifications(of: BlendMicro.tx).makeAsyncIterator()
        for _ in 0..<10 {
          #expect(try await ecg.next() != nil)
          #expect(try await temperatures.next() != nil)
        }
      }
    }

    /// Devices on two adapters stream at the same time, each to its own
    /// central. (One virtual controller holding two LE links at once fails
    /// the second link's MTU exchange inside bluetoothd under btvirt, so each
    /// link gets a controller of its own.)
    @Test(.enabled(if: Lab.adapterNames.count >= 4, "needs four adapters"))
    func devicesOnTwoAdaptersStreamAtTheSameTime() async throws {
      try await LabSession.run { lab in
        _ = try await lab.host(BlendMicro(name: "BoardA"), on: 0, name: "a")
        _ = try await lab.host(BlendMicro(name: "BoardB"), on: 2, name: "b")
        let clientA = try await lab.blendMicroClient(on: 1)
        let clientB = try await lab.blendMicroClient(on: 3)
        async let connectA = clientA.connect(namePrefix: "BoardA", timeout: .seconds(60))
        async let connectB = clientB.connect(namePrefix: "BoardB", timeout: .seconds(60))
        let (foundA, foundB) = try await (connectA, connectB)
        #expect(foundA.name == "BoardA" && foundB.name == "BoardB")
        #expect(foundA.id != foundB.id)
        var a = try await clientA.readings().makeAsyncIterator()
        var b = try await clientB.readings().makeAsyncIterator()
        for _ in 0..<50 {
          #expect(try await a.next() != nil)
          #expect(try await b.next() != nil)
        }
      }
    }
  }
}
