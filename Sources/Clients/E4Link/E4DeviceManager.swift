import GATT

/// One wristband, as the SDK's `EmpaticaDeviceManager`: connect and
/// disconnect, its status and battery level, and its data to an
/// `EmpaticaDeviceDelegate` and as streams, each value with the device's
/// time in seconds since 1970.
///
/// Ask for the streams before connecting. They continue across a lost link
/// and a new connection, and finish when `disconnect()` is called (ask again
/// for the next connection). On connecting, the manager subscribes to every
/// stream and writes the start command with the wall clock's time; the
/// wristband stamps sample n of a stream at that time + n / rate.
///
/// In the background (`EmpaticaAPI.prepareForBackground()`) values are held
/// and handed over together once per `EmpaticaAPI.backgroundDeliveryInterval`
/// of the API's clock, in order and with their own timestamps; status
/// changes still come at once. `prepareForResume()` hands over what is held
/// and goes back to one value at a time.
public actor E4DeviceManager {
  /// The wristband as the scan saw it.
  public nonisolated let peripheral: DiscoveredPeripheral
  let link: any CentralLink
  let clock: any Clock<Duration>
  let unixTime: @Sendable () -> Double

  /// The SDK's `status`: told to the delegate at every change.
  public private(set) var status: E4DeviceStatus = .disconnected
  /// The SDK's `batteryLevel`, 0…1: read on connecting, then as the wristband
  /// notifies it; 0 before the first reading.
  public private(set) var batteryLevel: Float = 0
  /// Notifications that did not decode (wrong length or values), dropped.
  public private(set) var malformedPackets = 0
  /// The Unix time the current (or last) session started at, as sent in the start command.
  public private(set) var sessionStart: Double?
  /// Why the last connection attempt failed; `nil` after one that succeeded.
  public private(set) var lastConnectionError: E4LinkError?

  private var connection: (any CentralConnection)?
  private var readers: [Task<Void, Never>] = []
  private var disconnecting = false
  private var batteryKnown = false
  /// Unwrapped packet counters of the current session, per characteristic.
  private var counters: [CharacteristicAddress: (last: UInt16, unwrapped: Int)] = [:]

  /// Values held while in the background, and the task handing them over.
  private var held: [Delivery] = []
  private var backgroundDelivery: Task<Void, Never>?

  private var delegate: (any EmpaticaDeviceDelegate)?
  private var statuses = Broadcast<E4DeviceStatus>()
  private var gsrSinks = Broadcast<E4Sample>()
  private var bvpSinks = Broadcast<E4Sample>()
  private var temperatureSinks = Broadcast<E4Sample>()
  private var accelerationSinks = Broadcast<E4Acceleration>()
  private var ibiSinks = Broadcast<E4Sample>()
  private var batterySinks = Broadcast<E4Sample>()
  private var tagSinks = Broadcast<E4Tag>()

  /// A decoded value on its way to the delegate and the streams.
  private enum Delivery {
    case bvp(E4Sample)
    case gsr(E4Sample)
    case temperature(E4Sample)
    case ibi(E4Sample)
    case battery(E4Sample)
    case acceleration(E4Acceleration)
    case tag(E4Tag)
  }

  init(
    peripheral: DiscoveredPeripheral, link: any CentralLink, clock: any Clock<Duration>,
    unixTime: @escaping @Sendable () -> Double
  ) {
    self.peripheral = peripheral
    self.link = link
    self.clock = clock
    self.unixTime = unixTime
  }

  /// The advertised name.
  public nonisolated var name: String? { peripheral.name }

  // MARK: - Delegate and streams

  /// Sets the `EmpaticaDeviceDelegate` without connecting (`connect(with:)`
  /// sets it and connects): told of every status change and value from now
  /// on, across connections, until replaced or set to `nil`. Held strongly.
  public func setDelegate(_ delegate: (any EmpaticaDeviceDelegate)?) {
    self.delegate = delegate
  }

  /// `didUpdateDeviceStatus:`: the current status, then every change.
  public func statusUpdates() -> AsyncStream<E4DeviceStatus> {
    statuses.makeStream(initial: status)
  }

  /// `didReceiveGSR:`: skin conductance in µS, 4 Hz.
  public func gsr() -> AsyncStream<E4Sample> { gsrSinks.makeStream() }
  /// `didReceiveBVP:`: blood volume pulse, 64 Hz.
  public func bvp() -> AsyncStream<E4Sample> { bvpSinks.makeStream() }
  /// `didReceiveTemperature:`: skin temperature in °C, 4 Hz.
  public func temperature() -> AsyncStream<E4Sample> { temperatureSinks.makeStream() }
  /// `didReceiveAccelerationX:y:z:`: 1/64 g per axis, 32 Hz.
  public func acceleration() -> AsyncStream<E4Acceleration> { accelerationSinks.makeStream() }
  /// `didReceiveIBI:`: interbeat intervals in seconds, stamped at the beat.
  public func ibi() -> AsyncStream<E4Sample> { ibiSinks.makeStream() }
  /// `didReceiveBatteryLevel:`: 0…1, on connecting and whenever it changes.
  public func batteryLevels() -> AsyncStream<E4Sample> { batterySinks.makeStream() }
  /// `didReceiveTagAtTimestamp:`: button presses.
  public func tags() -> AsyncStream<E4Tag> { tagSinks.makeStream() }

  // MARK: - Connection

  /// `connectWithDeviceDelegate:`: sets `deviceDelegate` and connects. The
  /// delegate is told the status goes to connecting, then connected, or
  /// back to disconnected when the attempt fails (`lastConnectionError`
  /// says why). Returns when the attempt has ended.
  public func connect(with deviceDelegate: any EmpaticaDeviceDelegate, timeout: Duration = .seconds(30)) async {
    delegate = deviceDelegate
    try? await connect(timeout: timeout)
  }

  /// `connectWithDeviceDelegate:andConnectionOptions:`: reserved by the SDK
  /// for future use; the options are ignored and it does what
  /// `connect(with:)` does.
  public func connect(
    with deviceDelegate: any EmpaticaDeviceDelegate, andConnectionOptions options: [String: String]?
  ) async {
    await connect(with: deviceDelegate)
  }

  /// Connects, checks the profile, subscribes to every stream, reads the
  /// battery, and starts streaming, telling the delegate (if set) as
  /// `connect(with:)` does, and throwing why an attempt failed. Throws
  /// `busy` unless disconnected.
  public func connect(timeout: Duration = .seconds(30)) async throws(E4LinkError) {
    guard status == .disconnected else {
      throw E4LinkError(.busy, "\(peripheral.name ?? "the wristband") is \(status), not disconnected")
    }
    set(.connecting)
    do {
      try await open(timeout: timeout)
      lastConnectionError = nil
    } catch {
      lastConnectionError = error
      set(.disconnected)
      throw error
    }
    set(.connected)
  }

  private func open(timeout: Duration) async throws(E4LinkError) {
    let connection: any CentralConnection
    do {
      connection = try await link.connect(peripheral.id, timeout: timeout)
    } catch {
      throw E4LinkError(error, while: "connecting to \(peripheral.id)")
    }
    self.connection = connection
    do {
      try await setUp(connection)
    } catch {
      stopReading()
      self.connection = nil
      await connection.disconnect()
      throw error
    }
    Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
      _ = try? await connection.disconnected()
      await self?.linkEnded(connection)
    }
  }

  private func setUp(_ connection: any CentralConnection) async throws(E4LinkError) {
    let services: [DiscoveredService]
    do {
      services = try await connection.discoverServices()
    } catch {
      throw E4LinkError(error, while: "discovering services")
    }
    let missing = (E4Profile.notifying + [E4Profile.command]).filter { address in
      services.first { $0.uuid == address.service }?.characteristic(address.characteristic) == nil
    }
    guard missing.isEmpty else {
      throw E4LinkError(
        .notAnE4, "\(peripheral.id) lacks " + missing.map(\.description).joined(separator: ", "))
    }
    for address in E4Profile.notifying {
      let values: NotificationStream
      do {
        values = try await connection.notifications(of: address)
      } catch {
        throw E4LinkError(error, while: "subscribing to \(address)")
      }
      readers.append(
        Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
          await self?.read(values, from: address)
        })
    }
    batteryKnown = false
    do {
      let battery = try await connection.read(E4Profile.battery)
      deliver(battery, from: E4Profile.battery)
    } catch {
      throw E4LinkError(error, while: "reading the battery level")
    }
    let command = E4Profile.startCommand(unixTime: unixTime())
    sessionStart = E4Profile.time(ofStartCommand: command)
    counters = [:]
    do {
      try await connection.write(command, to: E4Profile.command, type: .withResponse)
    } catch {
      throw E4LinkError(error, while: "starting the stream")
    }
  }

  /// `disconnect`: stops streaming and disconnects; the delegate is told
  /// disconnecting, then disconnected. With no wristband connected it changes
  /// nothing (no status is told). Either way it hands over any values held
  /// in the background and finishes the data streams.
  public func disconnect() async {
    if let connection, status == .connected || status == .connecting {
      disconnecting = true
      set(.disconnecting)
      try? await connection.write(E4Profile.stopCommand, to: E4Profile.command, type: .withResponse)
      await connection.disconnect()
      // The subscriptions end with the connection: deliver what they still hold.
      for reader in readers { await reader.value }
      readers = []
      self.connection = nil
      disconnecting = false
      set(.disconnected)
    }
    handOverHeld()
    finishStreams()
  }

  // MARK: - Background

  /// Holds values and hands them over every `interval`; `nil` hands over
  /// what is held and goes back to one value at a time.
  func deliverInBackground(every interval: Duration?) {
    backgroundDelivery?.cancel()
    backgroundDelivery = nil
    guard let interval else { return handOverHeld() }
    let clock = self.clock
    backgroundDelivery = Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
      while !Task.isCancelled {
        do { try await clock.sleep(for: interval) } catch { return }
        guard let self else { return }
        await self.handOverHeld()
      }
    }
  }

  private func handOverHeld() {
    let values = held
    held = []
    for value in values { hand(value) }
  }

  private func linkEnded(_ ended: any CentralConnection) {
    guard !disconnecting, let connection, connection.peripheral == ended.peripheral else { return }
    stopReading()
    self.connection = nil
    set(.disconnected)
  }

  private func stopReading() {
    for reader in readers { reader.cancel() }
    readers = []
  }

  private func finishStreams() {
    gsrSinks.finish()
    bvpSinks.finish()
    temperatureSinks.finish()
    accelerationSinks.finish()
    ibiSinks.finish()
    batterySinks.finish()
    tagSinks.finish()
  }

  private func set(_ new: E4DeviceStatus) {
    guard new != status else { return }
    status = new
    delegate?.didUpdate(new, forDevice: self)
    statuses.yield(new)
  }

  // MARK: - Decoding

  /// Delivers every notification of `values`, on the actor: taking one is not a switch to it and back.
  private func read(_ values: NotificationStream, from address: CharacteristicAddress) async {
    do {
      for try await bytes in values { deliver(bytes, from: address) }
    } catch {
      // The link ended; `linkEnded` reports it.
    }
  }

  /// The session index of packet `counter`'s first sample, unwrapping the 16-bit counter.
  private func firstIndex(counter: UInt16, of address: CharacteristicAddress, samplesPerPacket: Int) -> Int {
    let unwrapped: Int
    if let previous = counters[address] {
      unwrapped = previous.unwrapped + Int(counter &- previous.last)
    } else {
      unwrapped = Int(counter)
    }
    counters[address] = (counter, unwrapped)
    return unwrapped * samplesPerPacket
  }

  private func deliver(_ bytes: [UInt8], from address: CharacteristicAddress) {
    let t0 = sessionStart ?? 0
    switch address {
    case E4Profile.bvp:
      guard let packet = E4PacketDecoder.bvp(bytes) else { return malformed() }
      for (offset, value) in packet.values.enumerated() {
        let sample = E4Sample(value: value, timestamp: t0 + Double(packet.firstIndex + offset) / 64)
        emit(.bvp(sample))
      }
    case E4Profile.acceleration:
      guard let packet = E4PacketDecoder.acceleration(bytes) else { return malformed() }
      let first = firstIndex(counter: packet.counter, of: address, samplesPerPacket: 6)
      for (offset, sample) in packet.samples.enumerated() {
        let acceleration = E4Acceleration(
          x: sample.x, y: sample.y, z: sample.z, timestamp: t0 + Double(first + offset) / 32)
        emit(.acceleration(acceleration))
      }
    case E4Profile.gsr:
      guard let packet = E4PacketDecoder.gsr(bytes) else { return malformed() }
      let first = firstIndex(counter: packet.counter, of: address, samplesPerPacket: 6)
      for (offset, value) in packet.values.enumerated() {
        let sample = E4Sample(value: value, timestamp: t0 + Double(first + offset) / 4)
        emit(.gsr(sample))
      }
    case E4Profile.temperature:
      guard let packet = E4PacketDecoder.temperature(bytes) else { return malformed() }
      let first = firstIndex(counter: packet.counter, of: address, samplesPerPacket: 4)
      for (offset, value) in packet.values.enumerated() {
        let sample = E4Sample(value: value, timestamp: t0 + Double(first + offset) / 4)
        emit(.temperature(sample))
      }
    case E4Profile.ibi:
      guard let packet = E4PacketDecoder.interbeatInterval(bytes) else { return malformed() }
      let sample = E4Sample(value: packet.interval, timestamp: t0 + Double(packet.beatIndex) / 64)
      emit(.ibi(sample))
    case E4Profile.battery:
      guard let reading = E4PacketDecoder.battery(bytes) else { return malformed() }
      let level = Float(reading.level)
      // Told when the level changes (and once per connection).
      guard !batteryKnown || level != batteryLevel else { return }
      batteryKnown = true
      batteryLevel = level
      emit(.battery(E4Sample(value: reading.level, timestamp: reading.timestamp)))
    case E4Profile.control:
      switch E4PacketDecoder.control(bytes) {
      case .tag(let time):
        emit(.tag(E4Tag(timestamp: time)))
      case .poweringOff: break  // the disconnect follows
      case nil: malformed()
      }
    default:
      malformed()
    }
  }

  private func malformed() { malformedPackets += 1 }

  /// Hands `value` over now, or holds it while in the background.
  private func emit(_ value: Delivery) {
    if backgroundDelivery != nil { held.append(value) } else { hand(value) }
  }

  private func hand(_ value: Delivery) {
    switch value {
    case .bvp(let sample):
      delegate?.didReceiveBVP(Float(sample.value), withTimestamp: sample.timestamp, fromDevice: self)
      bvpSinks.yield(sample)
    case .gsr(let sample):
      delegate?.didReceiveGSR(Float(sample.value), withTimestamp: sample.timestamp, fromDevice: self)
      gsrSinks.yield(sample)
    case .temperature(let sample):
      delegate?.didReceiveTemperature(Float(sample.value), withTimestamp: sample.timestamp, fromDevice: self)
      temperatureSinks.yield(sample)
    case .ibi(let sample):
      delegate?.didReceiveIBI(Float(sample.value), withTimestamp: sample.timestamp, fromDevice: self)
      ibiSinks.yield(sample)
    case .battery(let sample):
      delegate?.didReceiveBatteryLevel(Float(sample.value), withTimestamp: sample.timestamp, fromDevice: self)
      batterySinks.yield(sample)
    case .acceleration(let sample):
      delegate?.didReceiveAccelerationX(
        sample.x, y: sample.y, z: sample.z, withTimestamp: sample.timestamp, fromDevice: self)
      accelerationSinks.yield(sample)
    case .tag(let tag):
      delegate?.didReceiveTag(atTimestamp: tag.timestamp, fromDevice: self)
      tagSinks.yield(tag)
    }
  }
}

/// The SDK's name for `E4DeviceManager`.
public typealias EmpaticaDeviceManager = E4DeviceManager
