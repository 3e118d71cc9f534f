import BlendMicro
import BlendMicroClient
import BlueZ
import DBus
import GATT
import Glibc
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

    /// A characteristic whose notifications bluetoothd holds for another
    /// session (here another bus connection's `AcquireNotify`; in a CI run,
    /// one an earlier link left behind) is taken over: the central ends that
    /// session (`StopNotify`) and acquires the notifications itself, and
    /// bluetoothd closes the other session's socket.
    @Test func aNotificationSessionBluetoothdHoldsIsEndedAndTakenOver() async throws {
      try await LabSession.run { lab in
        _ = try await lab.host(BlendMicro(name: "Held"), on: 0, name: "held")
        let central = try await lab.central(on: 1)
        var scan = central.scan(filter: ScanFilter(serviceUUIDs: [BlendMicro.uartService])).makeAsyncIterator()
        let found = try #require(await scan.next())
        let first = try await central.connect(found.id, timeout: .seconds(60))
        // Another client on the central's side acquires the TX characteristic's notifications and keeps the socket.
        let (holderBus, adapter) = try await lab.adapter(1)
        let devicePath = try adapter.devicePath(for: found.id.rawValue)
        let objects = try await DBusRemoteObject(connection: holderBus, destination: "org.bluez", path: BlueZ.root)
          .managedObjects()
        let txPath = try #require(
          objects.first { path, interfaces in
            path.isDescendant(of: devicePath)
              && interfaces["org.bluez.GattCharacteristic1"]?["UUID"]?.string?.lowercased()
                == BlendMicro.uartTX.uuidString
          }?.key)
        let acquired = try await DBusRemoteObject(connection: holderBus, destination: "org.bluez", path: txPath)
          .call("org.bluez.GattCharacteristic1", "AcquireNotify", [.properties([:])])
        guard case .unixFD(let held)? = acquired.first else {
          Issue.record("AcquireNotify answered \(acquired)")
          return
        }
        defer { _ = Glibc.close(held) }
        await lab.keep(first)
        var ecg = try await first.notifications(of: BlendMicro.tx).makeAsyncIterator()
        #expect(try await ecg.next() != nil)
        // The holder's socket ends (after the notifications it was sent while it held them).
        var ended = false
        var buffer = [UInt8](repeating: 0, count: 64)
        var descriptor = pollfd(fd: held, events: Int16(POLLIN), revents: 0)
        while !ended, poll(&descriptor, 1, 5_000) == 1 {
          ended = buffer.withUnsafeMutableBytes { read(held, $0.baseAddress, $0.count) } <= 0
        }
        #expect(ended, "bluetoothd did not close the holder's socket within 5 s")
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
