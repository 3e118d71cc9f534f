import BlueZ
import DBus
import DBusTestSupport
import GATT
import Testing

/// What a connect does when bluetoothd no longer knows the device.
@Suite(.timeLimit(.minutes(1)))
struct CentralConnectTests {
  /// bluetoothd removes a device it last heard as not connectable when a
  /// discovery stops (`discovery_cleanup`), so a client that scans, stops,
  /// then connects can find it gone (the ActiGraph's SDK-shaped client did,
  /// 2 of 60 cycles in the lab). The connect discovers it again and keeps
  /// discovering until bluetoothd has taken the connect.
  @Test func aDeviceBluetoothdForgotIsDiscoveredAgainBeforeConnecting() async throws {
    let privateBus = try await PrivateBus()
    let standIn = try await BluetoothdCentralStandIn.start(on: privateBus, peripheralKnown: false)
    defer { standIn.close() }
    let central = BlueZCentral(adapter: standIn.adapter, bus: try await privateBus.connect())
    let connection = try await central.connect(
      PeripheralID(BluetoothdCentralStandIn.peripheralAddress), timeout: .seconds(10))
    #expect(connection.peripheral == PeripheralID(BluetoothdCentralStandIn.peripheralAddress))
    // Discovery stops once the connect is taken, from a task of its own.
    for _ in 0..<100 where standIn.calls.count("StopDiscovery") == 0 { try await Task.sleep(for: .milliseconds(50)) }
    let calls = standIn.calls.all.filter { ["StartDiscovery", "Connect", "StopDiscovery"].contains($0) }
    #expect(calls == ["StartDiscovery", "Connect", "StopDiscovery"])
    await connection.disconnect()
  }

  /// A device that does not show up within the connect's limit is an error
  /// that says so, and discovery is stopped again.
  @Test func aDeviceThatNeverShowsUpIsNotFound() async throws {
    let privateBus = try await PrivateBus()
    let standIn = try await BluetoothdCentralStandIn.start(on: privateBus)
    defer { standIn.close() }
    let central = BlueZCentral(adapter: standIn.adapter, bus: try await privateBus.connect())
    await #expect {
      _ = try await central.connect(PeripheralID("00:AA:01:00:00:99"), timeout: .milliseconds(500))
    } throws: { error in
      "\(error)".hasPrefix("00:AA:01:00:00:99 is not known on hci0")
        && "\(error)".hasSuffix("was not found advertising within 0.5 seconds")
    }
    for _ in 0..<100 where standIn.calls.count("StopDiscovery") == 0 { try await Task.sleep(for: .milliseconds(50)) }
    #expect(standIn.calls.count("StartDiscovery") == 1)
    #expect(standIn.calls.count("StopDiscovery") == 1)
  }

  /// A connect that gives up (its limit passed, or its task was cancelled
  /// at the end of a run) calls the attempt off: bluetoothd would go on
  /// with it and link the next device that advertises from that address
  /// (seen in the lab between two scenarios on the same adapters).
  @Test func aConnectThatGivesUpIsCalledOff() async throws {
    let privateBus = try await PrivateBus()
    let standIn = try await BluetoothdCentralStandIn.start(on: privateBus, connectTime: .seconds(10))
    defer { standIn.close() }
    let central = BlueZCentral(adapter: standIn.adapter, bus: try await privateBus.connect())
    let peripheral = PeripheralID(BluetoothdCentralStandIn.peripheralAddress)
    await #expect(throws: GATTError.self) { _ = try await central.connect(peripheral, timeout: .milliseconds(300)) }
    #expect(standIn.calls.all.filter { ["Connect", "Disconnect"].contains($0) } == ["Connect", "Disconnect"])

    let cancelled = Task { _ = try await central.connect(peripheral, timeout: .seconds(30)) }
    for _ in 0..<100 where standIn.calls.count("Connect") < 2 { try await Task.sleep(for: .milliseconds(20)) }
    cancelled.cancel()
    _ = await cancelled.result
    #expect(
      standIn.calls.all.filter { ["Connect", "Disconnect"].contains($0) } == [
        "Connect", "Disconnect", "Connect", "Disconnect",
      ])
  }

  /// A link that comes up while its services never resolve (bluetoothd read
  /// neither side's first ATT request: one of 2,279 lab links)
  /// is ended and connected once more.
  @Test func aLinkThatStallsIsEndedAndConnectedAgain() async throws {
    let privateBus = try await PrivateBus()
    let standIn = try await BluetoothdCentralStandIn.start(on: privateBus, stalledLinks: 1)
    defer { standIn.close() }
    let central = BlueZCentral(
      adapter: standIn.adapter, bus: try await privateBus.connect(), linkStallLimit: .seconds(1))
    let connection = try await central.connect(
      PeripheralID(BluetoothdCentralStandIn.peripheralAddress), timeout: .seconds(20))
    #expect(connection.peripheral == PeripheralID(BluetoothdCentralStandIn.peripheralAddress))
    #expect(
      standIn.calls.all.filter { ["Connect", "Disconnect"].contains($0) } == ["Connect", "Disconnect", "Connect"])
    await connection.disconnect()
  }

  /// The same when bluetoothd answers `Connect` and the services never
  /// resolve: the connection the second link opens has its services.
  @Test func aLinkWhoseServicesNeverResolveIsEndedAndConnectedAgain() async throws {
    let privateBus = try await PrivateBus()
    let standIn = try await BluetoothdCentralStandIn.start(
      on: privateBus, stalledLinks: 1, stalledLinksAnswered: true)
    defer { standIn.close() }
    let central = BlueZCentral(
      adapter: standIn.adapter, bus: try await privateBus.connect(), linkStallLimit: .seconds(1))
    let connection = try await central.connect(
      PeripheralID(BluetoothdCentralStandIn.peripheralAddress), timeout: .seconds(20))
    #expect(
      standIn.calls.all.filter { ["Connect", "Disconnect"].contains($0) } == ["Connect", "Disconnect", "Connect"])
    let resolved = try await DBusRemoteObject(
      connection: standIn.bus, destination: BlueZ.service, path: standIn.devicePath
    ).property(BlueZ.deviceInterface, "ServicesResolved")
    #expect(resolved.bool == true)
    await connection.disconnect()
  }

  /// A link that stalls again is not connected a third time: the connect
  /// fails at its limit and calls the attempt off.
  @Test func aLinkThatStallsTwiceFailsAtTheLimit() async throws {
    let privateBus = try await PrivateBus()
    let standIn = try await BluetoothdCentralStandIn.start(on: privateBus, stalledLinks: 5)
    defer { standIn.close() }
    let central = BlueZCentral(
      adapter: standIn.adapter, bus: try await privateBus.connect(), linkStallLimit: .seconds(1))
    await #expect {
      _ = try await central.connect(PeripheralID(BluetoothdCentralStandIn.peripheralAddress), timeout: .seconds(5))
    } throws: { error in
      "\(error)".contains("no answer within 5.0 seconds")
    }
    #expect(
      standIn.calls.all.filter { ["Connect", "Disconnect"].contains($0) } == [
        "Connect", "Disconnect", "Connect", "Disconnect",
      ])
  }

  /// bluetoothd refuses a subscription with "Notify acquired" while it holds
  /// the characteristic's notifications for another session (in a CI run,
  /// one an earlier link had left). `StopNotify` ends such a session, and
  /// the central acquires once more.
  @Test func aSessionBluetoothdHoldsIsEndedAndTheSubscriptionMade() async throws {
    let privateBus = try await PrivateBus()
    let standIn = try await BluetoothdCentralStandIn.start(on: privateBus, notificationsHeld: true)
    defer { standIn.close() }
    let central = BlueZCentral(adapter: standIn.adapter, bus: try await privateBus.connect())
    let connection = try await central.connect(
      PeripheralID(BluetoothdCentralStandIn.peripheralAddress), timeout: .seconds(10))
    _ = try await connection.notifications(of: Self.characteristic)
    let subscribing = standIn.calls.all.filter { $0.hasSuffix("Notify") }
    #expect(subscribing == ["AcquireNotify", "StopNotify", "AcquireNotify"])
    await connection.disconnect()
  }

  static let characteristic = CharacteristicAddress(
    service: try! BluetoothUUID(string: BluetoothdCentralStandIn.service),
    characteristic: try! BluetoothUUID(string: BluetoothdCentralStandIn.characteristic))

  /// When `StopNotify` does not end it, the error names both refusals, and
  /// the next connect removes the device first, which frees that session.
  @Test func aSessionBluetoothdHoldsHasTheDeviceRemovedBeforeTheNextConnect() async throws {
    let privateBus = try await PrivateBus()
    let standIn = try await BluetoothdCentralStandIn.start(
      on: privateBus, notificationsHeld: true, stopNotifyEndsHeld: false)
    defer { standIn.close() }
    let central = BlueZCentral(adapter: standIn.adapter, bus: try await privateBus.connect())
    let peripheral = PeripheralID(BluetoothdCentralStandIn.peripheralAddress)
    let characteristic = Self.characteristic
    let first = try await central.connect(peripheral, timeout: .seconds(10))
    await #expect {
      _ = try await first.notifications(of: characteristic)
    } throws: { error in
      "\(error)".contains("(AcquireNotify: org.bluez.Error.NotPermitted: Notify acquired; then StartNotify)")
    }
    await first.disconnect()
    #expect(standIn.calls.count("RemoveDevice") == 0)
    let second = try await central.connect(peripheral, timeout: .seconds(10))
    let order = standIn.calls.all.filter { ["Connect", "RemoveDevice"].contains($0) }
    #expect(order == ["Connect", "RemoveDevice", "Connect"])
    _ = try await second.notifications(of: characteristic)
    await second.disconnect()
    // Marked once, forgotten once: a third connect goes straight to Connect.
    let third = try await central.connect(peripheral, timeout: .seconds(10))
    #expect(standIn.calls.count("RemoveDevice") == 1)
    await third.disconnect()
  }
}
