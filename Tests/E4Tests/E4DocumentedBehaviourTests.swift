import E4
import E4Link
import GATT
import Testing

/// What the SDK's class reference says, call by call: the order and timing of
/// the delegate callbacks, and what is refused.
@Suite(.timeLimit(.minutes(2)))
struct E4DocumentedBehaviourTests {
  let rig = E4Rig()

  private func authenticatedAPI(bluetoothAvailable: Bool = true) async throws -> EmpaticaAPI {
    let api = EmpaticaAPI(
      link: try rig.air.makeCentral(), clock: rig.clock, bluetoothAvailable: bluetoothAvailable,
      unixTime: rig.unixTime)
    #expect(await api.authenticate(apiKey: "key").success)
    return api
  }

  /// Scans until the first wristband is found and returns it.
  private func discover(_ api: EmpaticaAPI) async throws -> EmpaticaDeviceManager {
    var found: EmpaticaDeviceManager?
    for await event in try await api.discoverDevices(duration: .seconds(1)) {
      if case .found(let manager) = event {
        found = manager
        break
      }
    }
    return try #require(found)
  }

  @Test func discoveryTellsScanningThenReadyAndTheDevicesOnceAfterTheScan() async throws {
    try await rig.air.host(E4(configuration: E4Configuration(serialNumber: "A01")))
    try await rig.air.host(E4(configuration: E4Configuration(serialNumber: "A02")))
    let api = try await authenticatedAPI()
    let delegate = RecordingE4Delegate(clock: rig.clock)
    try await api.discoverDevices(with: delegate)
    // During the scan the status is scanning, and the devices are not told yet.
    #expect(delegate.calls == [.bleStatus(.scanning)])
    #expect(await api.bleStatus == kBLEStatusScanning)
    await rig.clock.advance(by: .seconds(4))
    #expect(delegate.calls == [.bleStatus(.scanning)])
    // After the scan (5 s): ready, then the whole list, once.
    await rig.clock.advance(by: .seconds(1))
    #expect(delegate.calls == [.bleStatus(.scanning), .bleStatus(.ready), .devices(["Empatica E4", "Empatica E4"])])
    #expect(delegate.timedCalls.dropFirst().allSatisfy { $0.at == .seconds(5) })
    #expect(await api.bleStatus == kBLEStatusReady)
    await rig.clock.advance(by: .seconds(10))
    #expect(delegate.discoveries.count == 1)
    await rig.air.removeAll()
  }

  @Test func aScanThatFindsNothingTellsAnEmptyList() async throws {
    let api = try await authenticatedAPI()
    let delegate = RecordingE4Delegate()
    try await api.discoverDevices(with: delegate)
    await rig.clock.advance(by: .seconds(5))
    #expect(delegate.calls == [.bleStatus(.scanning), .bleStatus(.ready), .devices([])])
  }

  @Test func discoveryWithoutAuthenticationIsRefused() async throws {
    try await rig.air.host(E4())
    let api = try rig.api(E4LocalVerifier.refusingEveryKey())
    let delegate = RecordingE4Delegate()
    #expect(await !api.authenticate(apiKey: "key").success)
    do {
      try await api.discoverDevices(with: delegate)
      Issue.record("discovery went ahead without authentication")
    } catch {
      #expect(error.code == .notAuthenticated)
    }
    await rig.clock.advance(by: .seconds(6))
    #expect(delegate.calls.isEmpty)
    #expect(await api.bleStatus == .ready)
    await rig.air.removeAll()
  }

  @Test func withoutBluetoothTheDelegateIsToldNotAvailableAndNoScanRuns() async throws {
    try await rig.air.host(E4())
    let api = try await authenticatedAPI(bluetoothAvailable: false)
    let delegate = RecordingE4Delegate()
    try await api.discoverDevices(with: delegate)
    await rig.clock.advance(by: .seconds(6))
    #expect(delegate.calls == [.bleStatus(kBLEStatusNotAvailable)])
    // A later change of the status is told too.
    await api.setBluetoothAvailable(true)
    #expect(delegate.calls == [.bleStatus(.notAvailable), .bleStatus(.ready)])
    await rig.air.removeAll()
  }

  @Test func connectWithDeviceDelegateConnectsInOneCallAndTellsEveryStatus() async throws {
    let model = E4(configuration: E4Configuration(batteryLevel: 0.9))
    try await rig.air.host(model)
    let manager = try await discover(try await authenticatedAPI())
    let delegate = RecordingE4Delegate(clock: rig.clock)
    // Disconnecting with nothing connected has no effect.
    await manager.disconnect()
    #expect(delegate.calls.isEmpty)
    #expect(await manager.status == kDeviceStatusDisconnected)

    await manager.connect(with: delegate)
    #expect(delegate.deviceStatuses == [.connecting, .connected])
    #expect(await manager.status == kDeviceStatusConnected)
    #expect(await manager.lastConnectionError == nil)
    // The battery level is a property, told once on connecting.
    #expect(await manager.batteryLevel == 0.9)
    #expect(delegate.calls.filter { if case .battery = $0 { true } else { false } }.count == 1)
    await rig.clock.advance(by: .seconds(2))
    let pressed = try #require(await model.pressButton())
    await rig.clock.advance(by: .milliseconds(100))
    #expect(delegate.calls.contains(.tag(pressed)))
    #expect(delegate.bvp.count == 128)

    await manager.disconnect()
    #expect(delegate.deviceStatuses == [.connecting, .connected, .disconnecting, .disconnected])
    // Again, with nothing connected: nothing more is told.
    let told = delegate.calls.count
    await manager.disconnect()
    #expect(delegate.calls.count == told)
    await rig.air.removeAll()
  }

  @Test func aFailedConnectionGoesBackToDisconnected() async throws {
    try await rig.air.host(E4())
    let manager = try await discover(try await authenticatedAPI())
    await rig.air.removeAll()
    let delegate = RecordingE4Delegate()
    await manager.connect(with: delegate)
    #expect(delegate.deviceStatuses == [.connecting, .disconnected])
    #expect(await manager.status == .disconnected)
    #expect(await manager.lastConnectionError != nil)
  }

  @Test func connectionOptionsAreReservedAndChangeNothing() async throws {
    try await rig.air.host(E4())
    let manager = try await discover(try await authenticatedAPI())
    let delegate = RecordingE4Delegate()
    await manager.connect(with: delegate, andConnectionOptions: ["any": "thing"])
    #expect(delegate.deviceStatuses == [.connecting, .connected])
    await manager.disconnect()
    await rig.air.removeAll()
  }

  @Test func inTheBackgroundValuesComeTogetherOncePerIntervalAndAllAtResume() async throws {
    try await rig.air.host(E4())
    let api = try await authenticatedAPI()
    let manager = try await discover(api)
    let delegate = RecordingE4Delegate(clock: rig.clock)
    let streamed = E4Rig.collect(await manager.bvp())
    let start = rig.clock.now.offset
    await manager.connect(with: delegate)
    await rig.clock.advance(by: .seconds(2))
    #expect(delegate.bvp.count == 128)
    await api.prepareForBackground()
    #expect(await api.isInBackground)
    await rig.clock.advance(by: .milliseconds(900))
    #expect(delegate.bvp.count == 128, "held in the background")
    await rig.clock.advance(by: .milliseconds(100))
    #expect(delegate.bvp.count == 192, "handed over after the interval")
    await rig.clock.advance(by: .milliseconds(1500))
    #expect(delegate.bvp.count == 256)
    await api.prepareForResume()
    #expect(delegate.bvp.count == 288, "what was held, at once")
    await rig.clock.advance(by: .milliseconds(500))
    #expect(delegate.bvp.count == 320)
    await manager.disconnect()
    // Nothing lost or reordered: the same samples as the stream, at 1/64 s steps.
    let samples = delegate.bvp
    let t0 = try #require(await manager.sessionStart)
    #expect(samples.enumerated().allSatisfy { $1.timestamp == t0 + Double($0) / 64 })
    #expect(samples.map(\.timestamp) == (await streamed.value).map(\.timestamp))
    // In the background, calls come only on the interval's ticks.
    let background = delegate.timedCalls.filter {
      if case .bvp = $0.call { $0.at > start + .seconds(2) && $0.at < start + .milliseconds(4500) } else { false }
    }
    #expect(Set(background.map(\.at)) == [start + .seconds(3), start + .seconds(4)])
    await rig.air.removeAll()
  }

  @Test func inTheBackgroundStatusChangesStillComeAtOnce() async throws {
    try await rig.air.host(E4())
    let api = try await authenticatedAPI()
    await api.prepareForBackground()
    // A wristband found after prepareForBackground is in the background too.
    let manager = try await discover(api)
    let delegate = RecordingE4Delegate()
    await manager.connect(with: delegate)
    await rig.clock.advance(by: .milliseconds(500))
    #expect(delegate.bvp.isEmpty)
    #expect(delegate.deviceStatuses == [.connecting, .connected])
    await rig.air.loseLinks(to: try #require(rig.air.peripherals.first))
    await rig.clock.advance(by: .milliseconds(100))
    #expect(delegate.deviceStatuses == [.connecting, .connected, .disconnected])
    #expect(delegate.bvp.isEmpty)
    await api.prepareForResume()
    #expect(delegate.bvp.count == 32)
    await rig.air.removeAll()
  }

  @Test func theClassMethodsActOnTheSharedInstance() async throws {
    // Before the app sets it, the shared instance has no Bluetooth.
    #expect(await EmpaticaAPI.shared.bleStatus == .notAvailable)
    try await rig.air.host(E4())
    let api = try rig.api()
    EmpaticaAPI.shared = api
    #expect(EmpaticaAPI.shared === api)
    let delegate = RecordingE4Delegate()
    await #expect(throws: E4LinkError.self) { try await EmpaticaAPI.discoverDevices(with: delegate) }
    let answer = await withCheckedContinuation { continuation in
      EmpaticaAPI.authenticate(withAPIKey: "key") { success, description in
        continuation.resume(returning: (success, description))
      }
    }
    #expect(answer.0)
    #expect(answer.1 == "authenticated")
    #expect(await EmpaticaAPI.authenticate(withAPIKey: "").0 == false)
    #expect(await EmpaticaAPI.authenticate(withAPIKey: "key").0)
    try await EmpaticaAPI.discoverDevices(with: delegate)
    await rig.clock.advance(by: .seconds(5))
    #expect(delegate.discoveries == [["Empatica E4"]])
    await EmpaticaAPI.prepareForBackground()
    #expect(await api.isInBackground)
    await EmpaticaAPI.prepareForResume()
    #expect(await !api.isInBackground)
    await rig.air.removeAll()
  }

  @Test func theStatusConstantsAreTheSDKs() {
    let statuses: [DeviceStatus] = [.disconnected, .connecting, .connected, .disconnecting]
    let named = statuses.map { status -> String in
      switch status {
      case kDeviceStatusDisconnected: "kDeviceStatusDisconnected"
      case kDeviceStatusConnecting: "kDeviceStatusConnecting"
      case kDeviceStatusConnected: "kDeviceStatusConnected"
      case kDeviceStatusDisconnecting: "kDeviceStatusDisconnecting"
      default: "unknown"
      }
    }
    #expect(
      named == [
        "kDeviceStatusDisconnected", "kDeviceStatusConnecting", "kDeviceStatusConnected", "kDeviceStatusDisconnecting",
      ])
    #expect([kBLEStatusNotAvailable, kBLEStatusReady, kBLEStatusScanning] == [.notAvailable, .ready, .scanning])
  }
}
