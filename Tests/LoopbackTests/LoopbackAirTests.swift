import GATT
import Loopback
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct LoopbackAirTests {
  let clock = VirtualClock()
  let air: LoopbackAir

  init() {
    air = LoopbackAir(clock: clock)
  }

  static func count(_ packet: [UInt8]) -> UInt32 {
    packet.reversed().reduce(0) { $0 << 8 | UInt32($1) }
  }

  /// The counts in a counter stream, until it ends or `limit` have arrived.
  static func counts(in stream: NotificationStream, upTo limit: Int = .max)
    async throws
    -> [UInt32]
  {
    var counts: [UInt32] = []
    for try await packet in stream {
      counts.append(count(packet))
      if counts.count == limit { break }
    }
    return counts
  }

  static func connect(_ central: LoopbackCentral, to peripheral: PeripheralID, timeout: Duration)
    async
    -> Result<any CentralConnection, GATTError>
  {
    do {
      return .success(try await central.connect(peripheral, timeout: timeout))
    } catch {
      return .failure(error)
    }
  }

  /// Hosts a counter peripheral and connects a new central to it.
  func connectedCounter(centralMTU: Int = 23, peripheralMTU: Int = 23) async throws
    -> (CounterPeripheral, any CentralConnection, CentralID)
  {
    let model = try CounterPeripheral()
    let id = try await air.host(model, preferredMTU: peripheralMTU)
    let central = try air.makeCentral(preferredMTU: centralMTU)
    let connection = try await central.connect(id, timeout: .seconds(5))
    return (model, connection, central.id)
  }

  @Test func aScannedAndConnectedClientReceivesAThousandCountsInTenVirtualSeconds() async throws {
    let beacon = try await air.host(BeaconPeripheral())
    let model = try CounterPeripheral()
    let counter = try await air.host(model)
    let central = try air.makeCentral()

    var scan = central.scan(filter: ScanFilter(serviceUUIDs: [CounterPeripheral.service]))
      .makeAsyncIterator()
    let found = await scan.next()
    #expect(found?.id == counter)
    #expect(found?.name == "Counter")
    #expect(found?.rssi == -50)
    var byName = central.scan(filter: ScanFilter(namePrefix: "Bea")).makeAsyncIterator()
    #expect(await byName.next()?.id == beacon)

    let connection = try await central.connect(try #require(found).id, timeout: .seconds(5))
    let services = try await connection.discoverServices()
    #expect(
      services.map(\.uuid) == [CounterPeripheral.service, CounterPeripheral.deviceInformation])
    let count = services.first?.characteristic(CounterPeripheral.counter.characteristic)
    #expect(count?.properties == .notify)
    #expect(count?.descriptors == [.clientCharacteristicConfiguration])

    let values = try await connection.notifications(of: CounterPeripheral.counter)
    async let counts = Self.counts(in: values, upTo: 1000)
    await VirtualClockTests.waitForSleepers(1, on: clock)
    await clock.advance(by: .seconds(10))
    #expect(try await counts == Array(0..<1000))
    #expect(clock.now.offset == .seconds(10))
    #expect(await model.sentCount == 1000)
  }

  @Test func theSameInputsGiveTheSameEvents() async throws {
    func run() async throws -> [String] {
      let clock = VirtualClock()
      let air = LoopbackAir(clock: clock)
      let model = try CounterPeripheral()
      let id = try await air.host(model, address: "D0:00:00:00:00:01", preferredMTU: 64)
      let central = try air.makeCentral(address: "C0:00:00:00:00:01", preferredMTU: 100)
      let connection = try await central.connect(id, timeout: .seconds(1))
      let values = try await connection.notifications(of: CounterPeripheral.counter)
      async let collected = Self.counts(in: values)
      await VirtualClockTests.waitForSleepers(1, on: clock)
      for value in 1...5 {
        try await connection.write(
          [UInt8(value)], to: CounterPeripheral.control, type: .withoutResponse)
      }
      try await connection.write([9], to: CounterPeripheral.control, type: .withResponse)
      await clock.advance(by: .milliseconds(35))
      await connection.disconnect()
      let counts = try await collected
      return await model.log + counts.map { "count \($0)" }
    }
    let first = try await run()
    #expect(
      first == [
        "start", "connected C0:00:00:00:00:01", "mtu 64",
        "subscribed d0e10002-0000-4000-8000-00000000c0de",
        "write without response [1]", "write without response [2]", "write without response [3]",
        "write without response [4]", "write without response [5]", "write with response [9]",
        "unsubscribed d0e10002-0000-4000-8000-00000000c0de",
        "disconnected C0:00:00:00:00:01 disconnected by the remote side",
        "count 0", "count 1", "count 2",
      ])
    #expect(try await run() == first)
  }

  @Test func readsAndWritesReachTheModelWithTheirWriteTypes() async throws {
    let (model, connection, central) = try await connectedCounter()
    #expect(try await connection.read(CounterPeripheral.control) == [0x00])
    try await connection.write([1, 2, 3], to: CounterPeripheral.control, type: .withResponse)
    #expect(try await connection.read(CounterPeripheral.control) == [1, 2, 3])
    try await connection.write([4, 5], to: CounterPeripheral.control, type: .withoutResponse)
    #expect(try await connection.read(CounterPeripheral.control) == [4, 5])
    #expect(try await connection.read(CounterPeripheral.hardwareRevision) == Array("rev C".utf8))
    #expect(
      await model.log == [
        "start", "connected \(central)", "write with response [1, 2, 3]",
        "write without response [4, 5]",
      ])
  }

  @Test func longReadsContinueAtAnOffset() async throws {
    let (model, connection, _) = try await connectedCounter()
    #expect(try await connection.read(CounterPeripheral.long) == CounterPeripheral.longValue)
    #expect(await model.readOffsets == [0, 22, 44])

    let (wideModel, wide, _) = try await connectedCounter(centralMTU: 247, peripheralMTU: 247)
    #expect(await wide.mtu == 247)
    #expect(try await wide.read(CounterPeripheral.long) == CounterPeripheral.longValue)
    #expect(await wideModel.readOffsets == [0])
  }

  @Test func anATTErrorFromTheModelReachesTheClientWithItsCode() async throws {
    let (_, connection, _) = try await connectedCounter()
    let error = await #expect(throws: GATTError.self) {
      try await connection.write(
        CounterPeripheral.refuseCommand, to: CounterPeripheral.control, type: .withResponse)
    }
    #expect(error?.code == .attribute(.application(0x81)))
    #expect(error?.attributeError?.code == 0x81)

    let tooLong = await #expect(throws: GATTError.self) {
      try await connection.write(
        [UInt8](repeating: 0, count: 9), to: CounterPeripheral.control, type: .withResponse)
    }
    #expect(tooLong?.code == .attribute(.invalidAttributeValueLength))
  }

  @Test func theHostRefusesWhatTheCharacteristicDoesNotSupport() async throws {
    let (_, connection, _) = try await connectedCounter()
    let write = await #expect(throws: GATTError.self) {
      try await connection.write([1], to: CounterPeripheral.long, type: .withResponse)
    }
    #expect(write?.code == .notSupported)
    let read = await #expect(throws: GATTError.self) {
      try await connection.read(CounterPeripheral.counter)
    }
    #expect(read?.code == .notSupported)
    let subscribe = await #expect(throws: GATTError.self) {
      try await connection.notifications(of: CounterPeripheral.control)
    }
    #expect(subscribe?.code == .notSupported)
    let missing = await #expect(throws: GATTError.self) {
      try await connection.read(CharacteristicAddress(service: "180A", characteristic: "2A29"))
    }
    #expect(missing?.code == .notFound)
  }

  @Test func aWriteWithoutResponseLongerThanMTUMinus3IsRefused() async throws {
    let (model, connection, central) = try await connectedCounter()
    let error = await #expect(throws: GATTError.self) {
      try await connection.write(
        [UInt8](repeating: 1, count: 21), to: CounterPeripheral.control, type: .withoutResponse)
    }
    #expect(error?.code == .valueTooLong)
    _ = try await connection.read(CounterPeripheral.control)
    #expect(await model.log == ["start", "connected \(central)"])
  }

  @Test func aNotificationLongerThanMTUMinus3IsRefused() async throws {
    let (model, connection, _) = try await connectedCounter()
    let bulk = try await connection.notifications(of: CounterPeripheral.bulk)
    try await connection.write(
      [CounterPeripheral.sendBulkCommand, 21], to: CounterPeripheral.control, type: .withResponse)
    try await connection.write(
      [CounterPeripheral.sendBulkCommand, 20], to: CounterPeripheral.control, type: .withResponse)
    try await connection.write(
      [CounterPeripheral.sendBulkCommand, 3, 1], to: CounterPeripheral.control, type: .withResponse)
    #expect(await model.bulkResults == ["valueTooLong", "sent 20", "sent 3"])
    var received = bulk.makeAsyncIterator()
    #expect(try await received.next()?.count == 20)
    #expect(try await received.next()?.count == 3)

    let (wideModel, wide, _) = try await connectedCounter(centralMTU: 185, peripheralMTU: 247)
    #expect(await wide.mtu == 185)
    let wideBulk = try await wide.notifications(of: CounterPeripheral.bulk)
    try await wide.write(
      [CounterPeripheral.sendBulkCommand, 182], to: CounterPeripheral.control, type: .withResponse)
    try await wide.write(
      [CounterPeripheral.sendBulkCommand, 183], to: CounterPeripheral.control, type: .withResponse)
    #expect(await wideModel.bulkResults == ["sent 182", "valueTooLong"])
    var wideReceived = wideBulk.makeAsyncIterator()
    #expect(try await wideReceived.next()?.count == 182)
  }

  @Test func notificationsReachEverySubscribedCentralUnlessOneCannotTakeThem() async throws {
    let model = try CounterPeripheral()
    let id = try await air.host(model, preferredMTU: 247)
    let small = try air.makeCentral(address: "C0:00:00:00:00:01")
    let large = try air.makeCentral(address: "C0:00:00:00:00:02", preferredMTU: 100)
    let smallConnection = try await small.connect(id, timeout: .seconds(1))
    let largeConnection = try await large.connect(id, timeout: .seconds(1))
    let smallValues = try await smallConnection.notifications(of: CounterPeripheral.bulk)
    let largeValues = try await largeConnection.notifications(of: CounterPeripheral.bulk)

    let view = await model.hostView()
    #expect(view.connected == [small.id, large.id])
    #expect(view.bulkSubscribers == [small.id, large.id])
    #expect(view.mtus == [23, 100])

    for size: UInt8 in [30, 1, 2, 3] {
      try await largeConnection.write(
        [CounterPeripheral.sendBulkCommand, size], to: CounterPeripheral.control,
        type: .withResponse)
    }
    #expect(await model.bulkResults == ["valueTooLong", "sent 1", "sent 2", "sent 3"])
    await smallConnection.disconnect()
    await largeConnection.disconnect()
    var smallSizes: [Int] = []
    for try await value in smallValues { smallSizes.append(value.count) }
    var largeSizes: [Int] = []
    for try await value in largeValues { largeSizes.append(value.count) }
    #expect(smallSizes == [1, 2, 3])
    #expect(largeSizes == [1, 2, 3])
    #expect(await model.hostView().connected.isEmpty)
  }

  /// A consumer that takes each value on the notifying call may end its
  /// subscription right there (here by cancelling its own task): the air
  /// hands values out only after releasing its lock, which ending the
  /// subscription takes again.
  @Test func aConsumerMayEndItsSubscriptionFromTheNotifyingCall() async throws {
    let (model, connection, _) = try await connectedCounter()
    let values = try await connection.notifications(of: CounterPeripheral.counter)
    let received = Mutex<[UInt32]>([])
    let consumer = Mutex<Task<Void, any Error>?>(nil)
    let task = Task {
      try await values.receiveEach { packet in
        let count = received.withLock { received in
          received.append(Self.count(packet))
          return received.count
        }
        if count == 10 { consumer.withLock { $0?.cancel() } }
      }
    }
    consumer.withLock { $0 = task }
    await VirtualClockTests.waitForSleepers(1, on: clock)
    await clock.advance(by: .seconds(1))
    try await task.value
    #expect(received.withLock { $0 } == Array(0..<10))
    #expect(await model.log.contains("unsubscribed \(CounterPeripheral.counter.characteristic)"))
  }

  /// Each refusal twice: the second is the one the host remembered, which a
  /// subscription (and its end) must make it forget.
  @Test func aNotificationWithoutSubscribersIsRefused() async throws {
    let (model, connection, _) = try await connectedCounter()
    for count: UInt8 in [1, 1] {
      try await connection.write(
        [CounterPeripheral.sendBulkCommand, count], to: CounterPeripheral.control, type: .withResponse)
    }
    let values = try await connection.notifications(of: CounterPeripheral.bulk)
    try await connection.write(
      [CounterPeripheral.sendBulkCommand, 2], to: CounterPeripheral.control, type: .withResponse)
    _ = consume values
    for count: UInt8 in [3, 3] {
      try await connection.write(
        [CounterPeripheral.sendBulkCommand, count], to: CounterPeripheral.control, type: .withResponse)
    }
    #expect(
      await model.bulkResults == ["noSubscribers", "noSubscribers", "sent 2", "noSubscribers", "noSubscribers"])
  }

  @Test func aClientDisconnectIsReportedToTheModel() async throws {
    let (model, connection, central) = try await connectedCounter()
    let values = try await connection.notifications(of: CounterPeripheral.counter)
    await connection.disconnect()
    #expect(await connection.disconnectReason == .local)
    #expect(try await connection.disconnected() == .local)
    #expect(
      await model.log.suffix(2) == [
        "unsubscribed \(CounterPeripheral.counter.characteristic)",
        "disconnected \(central) disconnected by the remote side",
      ])
    var iterator = values.makeAsyncIterator()
    #expect(try await iterator.next() == nil)
    let error = await #expect(throws: GATTError.self) {
      try await connection.read(CounterPeripheral.control)
    }
    #expect(error?.code == .notConnected)
  }

  @Test func aPeripheralDisconnectIsReportedToTheClient() async throws {
    let (model, connection, central) = try await connectedCounter()
    let events = connection.events()
    let values = try await connection.notifications(of: CounterPeripheral.counter)
    try await connection.write(
      CounterPeripheral.hangUpCommand, to: CounterPeripheral.control, type: .withoutResponse)
    #expect(try await connection.disconnected() == .remote)
    var iterator = events.makeAsyncIterator()
    #expect(await iterator.next() == .disconnected(.remote))
    #expect(await iterator.next() == nil)
    await #expect(throws: GATTError.self) {
      for try await _ in values {}
    }
    _ = try await air.makeCentral().connect(air.peripherals[0], timeout: .seconds(1))
    #expect(await model.log.contains("disconnected \(central) disconnected locally"))
  }

  @Test func aRequestInFlightWhenThePeripheralHangsUpFailsAsDisconnected() async throws {
    let (_, connection, _) = try await connectedCounter()
    let error = await #expect(throws: GATTError.self) {
      try await connection.write(
        CounterPeripheral.hangUpCommand, to: CounterPeripheral.control, type: .withResponse)
    }
    #expect(error?.code == .disconnected(.remote))
  }

  @Test func aLostLinkIsReportedToBothSides() async throws {
    let (model, connection, central) = try await connectedCounter()
    await air.loseLinks(to: connection.peripheral)
    #expect(try await connection.disconnected() == .linkLoss)
    #expect(await model.log.last == "disconnected \(central) link lost")
  }

  @Test func connectingToAPeripheralOutOfRangeTimesOutOnTheClock() async throws {
    let model = try CounterPeripheral()
    let id = try await air.host(model)
    await air.setInRange(false, id)
    let central = try air.makeCentral()
    async let attempt = Self.connect(central, to: id, timeout: .seconds(5))
    await VirtualClockTests.waitForSleepers(1, on: clock)
    await clock.advance(by: .seconds(5))
    let result = await attempt
    #expect(throws: GATTError(.timeout, "connecting to \(id) timed out after 5.0 seconds")) {
      try result.get()
    }
    #expect(clock.now.offset == .seconds(5))
    #expect(await model.log == ["start"])
  }

  @Test func aPeripheralComingIntoRangeCompletesAWaitingConnection() async throws {
    let model = try CounterPeripheral()
    let id = try await air.host(model)
    await air.setInRange(false, id)
    let central = try air.makeCentral()
    async let attempt = Self.connect(central, to: id, timeout: .seconds(5))
    await VirtualClockTests.waitForSleepers(1, on: clock)
    await clock.advance(by: .seconds(2))
    await air.setInRange(true, id)
    let connection = try await attempt.get()
    #expect(await connection.disconnectReason == nil)
    #expect(clock.sleeperCount == 0)
    #expect(await model.log == ["start", "connected \(central.id)"])
  }

  @Test func aModelSwitchesItsAdvertisingOnlyWhileItIsHosted() async throws {
    let first = try CounterPeripheral()
    let id = try await air.host(first)
    await air.remove(id)
    let second = try CounterPeripheral()
    _ = try await air.host(second, address: id)
    // The first hosting's host, still held by its model, leaves the second alone.
    await first.setAdvertising(false)
    #expect(air.isAdvertising(id))
    // The second's own host switches it off and on.
    await second.setAdvertising(false)
    #expect(!air.isAdvertising(id))
    await first.setAdvertising(true)
    #expect(!air.isAdvertising(id))
    await second.setAdvertising(true)
    #expect(air.isAdvertising(id))
  }

  /// The air starts a model before it goes on the air: one that switches
  /// its advertising off while starting is never reported by a scan, even
  /// one running while it is hosted.
  @Test func aModelThatStartsOffTheAirIsNeverScanned() async throws {
    let central = try air.makeCentral()
    var scan = central.scan(filter: .any).makeAsyncIterator()
    let dark = try await air.host(try CounterPeripheral(name: "Dark", advertisesAtStart: false))
    let lit = try await air.host(try CounterPeripheral(name: "Lit"))
    let other = try await air.host(try CounterPeripheral(name: "Other"))
    let scanned = [await scan.next()?.id, await scan.next()?.id]
    #expect(scanned == [lit, other], "the dark one: \(dark)")
    #expect(!air.isAdvertising(dark))
  }

  @Test func connectingToAnUnknownPeripheralFails() async throws {
    let central = try air.makeCentral()
    let error = await #expect(throws: GATTError.self) {
      try await central.connect("00:11:22:33:44:55", timeout: .seconds(1))
    }
    #expect(error?.code == .notFound)
  }

  @Test func removingAPeripheralDisconnectsItsCentralsAndStopsIt() async throws {
    let (model, connection, central) = try await connectedCounter()
    await air.remove(connection.peripheral)
    #expect(try await connection.disconnected() == .remote)
    #expect(await model.log.suffix(2) == ["disconnected \(central) disconnected locally", "stop"])
    #expect(air.peripherals.isEmpty)
  }

  @Test func removingEverythingEndsScansAndStopsModels() async throws {
    let (model, connection, _) = try await connectedCounter()
    let central = try air.makeCentral()
    var scan = central.scan(filter: .any).makeAsyncIterator()
    #expect(await scan.next()?.id == connection.peripheral)
    await air.removeAll()
    #expect(await scan.next() == nil)
    #expect(await model.log.last == "stop")
    #expect(try await connection.disconnected() == .remote)
  }

  @Test func refusesBadConfiguration() async throws {
    #expect(throws: GATTError.self) { try air.makeCentral(preferredMTU: 22) }
    _ = try air.makeCentral(address: "C0:00:00:00:00:09")
    #expect(throws: GATTError.self) { try air.makeCentral(address: "C0:00:00:00:00:09") }
    let id = try await air.host(BeaconPeripheral())
    await #expect(throws: GATTError.self) { try await air.host(BeaconPeripheral(), address: id) }
  }
}
