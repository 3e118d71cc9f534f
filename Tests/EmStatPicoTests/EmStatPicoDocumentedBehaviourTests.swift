import EmStatPico
import EmStatPicoClient
import GATT
import MethodScriptFormat
import Testing

/// What PalmSens' MethodSCRIPT iOS example document says `BLEConnection`
/// does, function by function, over the loopback in virtual time.
@Suite(.timeLimit(.minutes(2)))
struct EmStatPicoDocumentedBehaviourTests {
  let rig = EmStatPicoRig()

  static func pico(_ name: String) -> EmStatPico {
    EmStatPico(configuration: EmStatPicoConfiguration(name: name, currentNoise: 0, impedanceNoise: 0))
  }

  /// Advertises a name but not the VSP service.
  struct OtherDevice: PeripheralModel {
    let profile = try! GATTProfile([])
    let advertisement = AdvertisementData(localName: "EmStat Pico impostor")
  }

  @Test func scanningListsTheVSPDevicesToPickFromAndConnectingStopsTheScan() async throws {
    try await rig.air.host(Self.pico("EmStat Pico A"))
    try await rig.air.host(Self.pico("EmStat Pico B"))
    try await rig.air.host(OtherDevice())
    let client = EmStatPicoClient(link: try rig.air.makeCentral(), clock: rig.clock)
    await client.startScanningForDevices()
    #expect(await client.state == .scanning)
    await rig.clock.advance(by: .seconds(2))
    // Only devices with the VSP service, each once; the scan goes on until told.
    let names = await client.scannedDevices.compactMap(\.name)
    #expect(names.sorted() == ["EmStat Pico A", "EmStat Pico B"])
    #expect(await client.isScanning)
    // The user picks B: the scan stops and the client connects to B.
    let picked = try #require(await client.scannedDevices.first { $0.name == "EmStat Pico B" })
    try await client.connectToDevice(picked)
    #expect(await client.state == .connected(picked.id))
    #expect(await !client.isScanning)
    // A device that shows up later is not added: the scan has stopped.
    try await rig.air.host(Self.pico("EmStat Pico C"))
    await rig.clock.advance(by: .seconds(2))
    #expect(await client.scannedDevices.count == 2)
    await client.disconnect()
    if case .disconnected = await client.state {} else { Issue.record("not disconnected: \(await client.state)") }
    await rig.air.removeAll()
  }

  @Test func aDeviceNotInTheScannedListIsNotConnected() async throws {
    try await rig.air.host(Self.pico("EmStat Pico"))
    let scout = EmStatPicoClient(link: try rig.air.makeCentral(), clock: rig.clock)
    await scout.startScanningForDevices()
    await rig.clock.advance(by: .seconds(1))
    let device = try #require(await scout.scannedDevices.first)
    await scout.stopScanningForDevices()
    #expect(await scout.state == .idle)
    let client = EmStatPicoClient(link: try rig.air.makeCentral(), clock: rig.clock)
    do {
      try await client.connectToDevice(device)
      Issue.record("connected to a device it never scanned")
    } catch let error as EmStatPicoClientError {
      #expect(error.code == .notScanned)
    }
    #expect(await client.state == .idle)
    await rig.air.removeAll()
  }

  @Test func sendCommandVersionSendsTAndAnswersTheDocumentsVersion() async throws {
    let model = Self.pico("EmStat Pico")
    let client = try await rig.connect(model)
    let written = await client.bytesWritten
    #expect(try await client.sendCommandVersion() == "testpico#Aug 2 2019 11:06:07")
    #expect(await client.bytesWritten - written == 2)
    #expect(await model.commands.last == "t")
    #expect(EmStatPicoClient.commandVersion == "t\n")
    await rig.air.removeAll()
  }

  @Test func scriptsAreWrittenInChunksOfTwentyBytes() async throws {
    let client = try await rig.connect(Self.pico("EmStat Pico"))
    let (bytes, writes) = (await client.bytesWritten, await client.writesMade)
    let message = String(repeating: "var c\n", count: 9)  // 54 bytes
    try await client.sendMessage(message)
    #expect(await client.bytesWritten - bytes == 54)
    #expect(await client.writesMade - writes == 3)
    try await client.sendBytes(Array("v\n".utf8))
    #expect(await client.writesMade - writes == 4)
    await rig.air.removeAll()
  }

  @Test func aMethodScriptAnswersEThenTheLoopItsPackagesAndTheEnd() async throws {
    let client = try await rig.connect(Self.pico("EmStat Pico"))
    let stream = try await client.sendMethodScript(methodScript: EmStatPicoLoopbackTests.lsv)
    let events = Task {
      var events: [MeasurementEvent] = []
      for try await event in stream { events.append(event) }
      return events
    }
    await rig.clock.advance(by: .seconds(30))
    let seen = try await events.value
    // 'e', then 'M', then 'P' packages, then '*', then the empty line that ends the stream.
    guard case .scriptAccepted = seen.first, case .loopStarted = seen.dropFirst().first, case .loopEnded = seen.last
    else {
      Issue.record("unexpected order: \(seen.prefix(2)) … \(seen.suffix(1))")
      return
    }
    let packages = EmStatPicoRig.packages(seen)
    #expect(packages.count == 101)
    #expect(seen.dropFirst(2).dropLast().allSatisfy { if case .package = $0 { true } else { false } })
    await rig.air.removeAll()
  }

  @Test func theDocumentsSamplePackageParses() throws {
    let package = try EmStatPicoClient.parsePackageLine("Pda7F85F3Fu;ba4BA99F0p,10,288")
    #expect(package.potential == -499_905e-6)  // E (V) = -4.999E-01
    #expect(package.current == -54_879_760e-12)
    #expect(package.status == .ok)  // Status = OK
    #expect(package.currentRange == CurrentRange(index: 0x88))
    #expect(package.currentRange?.isHighSpeed == true)
    #expect(package.currentRange?.description == "1 mA (high speed)")  // CR = 1mA (High speed)
    #expect(package.status?.description == "OK")
  }
}
