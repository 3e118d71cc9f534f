import GATT
import Signals

/// An emulated Empatica E4 wristband: blood volume pulse (64 Hz),
/// acceleration (32 Hz), electrodermal activity and skin temperature (4 Hz),
/// interbeat intervals detected on the device from the BVP it sends, battery
/// level with drain, and button presses (tags), on the documented E4
/// emulation profile (README.md).
///
/// Streaming starts when a central writes the start command (with its Unix
/// time, which sets the device clock) and stops on the stop command or when
/// the last central disconnects. Every sample carries a device-side time:
/// sample n of a stream is at the start command's time + n / rate.
///
/// Every stream is a `SignalSource` a scenario can replace; a source set
/// with `setSource(_:for:)` starts at its own time zero when set (the
/// initial ones when hosting starts). When a source ends, its stream stops.
public actor E4: PeripheralModel {
  public static let sensorService = BluetoothUUID(0x3EA0)
  public static let commandService = BluetoothUUID(0x3E70)
  public static let statusService = BluetoothUUID(0x3EB0)
  public static let deviceInformationService = BluetoothUUID(0x180A)
  /// BVP, 8 samples per notification (this project's layout).
  public static let bvp = CharacteristicAddress(service: sensorService, characteristic: BluetoothUUID(0x3EA1))
  /// Acceleration, 6 x/y/z triplets per notification.
  public static let acceleration = CharacteristicAddress(service: sensorService, characteristic: BluetoothUUID(0x3EA3))
  /// Skin temperature, 4 samples per notification.
  public static let temperature = CharacteristicAddress(service: sensorService, characteristic: BluetoothUUID(0x3EA6))
  /// EDA, 6 samples per notification.
  public static let eda = CharacteristicAddress(service: sensorService, characteristic: BluetoothUUID(0x3EA8))
  /// Interbeat intervals, one per notification (this project's UUID and layout).
  public static let interbeatInterval = CharacteristicAddress(
    service: sensorService, characteristic: BluetoothUUID(0x3EAA))
  /// Commands: start and stop streaming.
  public static let command = CharacteristicAddress(service: commandService, characteristic: BluetoothUUID(0x3E71))
  /// Control events: button presses, power-off (this project's layout).
  public static let control = CharacteristicAddress(service: statusService, characteristic: BluetoothUUID(0x3EB2))
  /// Battery level, read and notify (this project's layout).
  public static let battery = CharacteristicAddress(service: statusService, characteristic: BluetoothUUID(0x3EB3))
  /// ATT application error for an unknown command.
  public static let unknownCommand = ATTError.application(0x80)

  public nonisolated let profile: GATTProfile
  public nonisolated let advertisement: AdvertisementData
  public nonisolated let configuration: E4Configuration

  /// What each signal carries, by `E4Signal.index`.
  private var sources: [any SignalSource]
  /// When each source was set, on the device timeline: its time zero (by `E4Signal.index`).
  private var sourceOrigins = [Duration](repeating: .zero, count: E4Signal.allCases.count)
  private var host: (any PeripheralHost)?
  private var timeline: DeviceTimeline?
  private var connected: [CentralID] = []
  private var session: StreamingSession?
  private var generation = 0
  private var streamTask: Task<Void, Never>?
  private var batteryTask: Task<Void, Never>?

  /// The device clock: Unix time `clockBase` at `clockSetAt` on the timeline.
  private var clockBase: Double
  private var clockSetAt: Duration = .zero
  private var battery: DrainingBattery
  private var drain: E4Configuration.BatteryDrain
  private var lastBatteryPercent: UInt8?

  /// Whether the device is on (it switches off when its battery empties).
  public private(set) var isPoweredOn = true
  /// Button presses so far (Unix seconds, device clock), sent or not.
  public private(set) var tags: [Double] = []
  /// Streaming sessions started so far.
  public private(set) var sessionCount = 0
  /// Interbeat intervals sent in all sessions.
  public private(set) var interbeatIntervalsSent = 0

  /// - Parameters:
  ///   - configuration: identity, clock, battery, beat detection.
  ///   - bvp: the blood volume pulse (BVP units; sent in 1/16 steps).
  ///   - eda: skin conductance in µS.
  ///   - temperature: skin temperature in °C.
  ///   - accelerationX, accelerationY, accelerationZ: acceleration in g
  ///     (sent in 1/64 g steps, saturating at −2…+1.98 g). The default is a
  ///     wrist at rest, face up: 1 g along z.
  public init(
    configuration: E4Configuration = E4Configuration(),
    bvp: any SignalSource = SyntheticPPG(),
    eda: any SignalSource = SyntheticEDA(),
    temperature: any SignalSource = TemperatureDrift(),
    accelerationX: any SignalSource = ConstantSignal(0),
    accelerationY: any SignalSource = ConstantSignal(0),
    accelerationZ: any SignalSource = ConstantSignal(1)
  ) {
    self.configuration = configuration
    sources = [bvp, eda, temperature, accelerationX, accelerationY, accelerationZ]
    assert(E4Signal.allCases.allSatisfy { $0.index == E4Signal.allCases.firstIndex(of: $0) })
    clockBase = configuration.clockTime
    battery = DrainingBattery(level: configuration.batteryLevel)
    drain = configuration.batteryDrain
    isPoweredOn = configuration.batteryLevel > 0
    advertisement = AdvertisementData(localName: configuration.name, serviceUUIDs: [Self.sensorService])
    profile = Self.makeProfile(serialNumber: configuration.serialNumber)
  }

  private static func makeProfile(serialNumber: String) -> GATTProfile {
    func stream(_ address: CharacteristicAddress, _ name: String) -> CharacteristicDefinition {
      CharacteristicDefinition(address.characteristic, name: name, properties: [.notify])
    }
    // The definitions are fixed and valid; a failure here is a programming error.
    return try! GATTProfile([
      ServiceDefinition(
        sensorService, name: "E4 Sensors",
        characteristics: [
          stream(bvp, "BVP"), stream(acceleration, "Acceleration"), stream(temperature, "Temperature"),
          stream(eda, "EDA"), stream(interbeatInterval, "IBI"),
        ]),
      ServiceDefinition(
        commandService, name: "E4 Command",
        characteristics: [
          CharacteristicDefinition(
            command.characteristic, name: "Command", properties: [.write, .writeWithoutResponse], maximumLength: 20)
        ]),
      ServiceDefinition(
        statusService, name: "E4 Status",
        characteristics: [
          stream(control, "Control"),
          CharacteristicDefinition(battery.characteristic, name: "Battery", properties: [.read, .notify]),
        ]),
      ServiceDefinition(
        deviceInformationService, name: "Device Information",
        characteristics: [
          CharacteristicDefinition(
            BluetoothUUID(0x2A29), name: "Manufacturer Name", properties: [.read], initialValue: Array("Empatica".utf8)),
          CharacteristicDefinition(
            BluetoothUUID(0x2A24), name: "Model Number", properties: [.read], initialValue: Array("E4".utf8)),
          CharacteristicDefinition(
            BluetoothUUID(0x2A25), name: "Serial Number", properties: [.read], initialValue: Array(serialNumber.utf8)),
        ]),
    ])
  }

  // MARK: - What a scenario drives

  /// Replaces what `signal` carries; the source's time zero is now.
  public func setSource(_ source: any SignalSource, for signal: E4Signal) {
    sources[signal.index] = source
    sourceOrigins[signal.index] = timeline?.elapsed() ?? .zero
    if let channel = Self.channel(of: signal) { session?.ended[channel] = false }
  }

  /// Replaces the blood volume pulse.
  public func setBVP(_ source: any SignalSource) { setSource(source, for: .bvp) }
  /// Replaces the skin conductance (µS).
  public func setEDA(_ source: any SignalSource) { setSource(source, for: .eda) }
  /// Replaces the skin temperature (°C).
  public func setTemperature(_ source: any SignalSource) { setSource(source, for: .temperature) }
  /// Replaces the three acceleration axes (g).
  public func setAcceleration(x: any SignalSource, y: any SignalSource, z: any SignalSource) {
    setSource(x, for: .accelerationX)
    setSource(y, for: .accelerationY)
    setSource(z, for: .accelerationZ)
  }

  /// Presses the button: a tag at the device clock's time, notified on
  /// Control to subscribed centrals and kept in `tags`. Returns its time;
  /// `nil` when the device is off.
  @discardableResult
  public func pressButton() async -> Double? {
    guard isPoweredOn else { return nil }
    let time = clockTime
    tags.append(time)
    await send(E4Packet.controlEvent(E4Packet.tagEvent, time: time), to: Self.control)
    return time
  }

  /// Sets the battery level (0…1) and notifies it when its percentage changed.
  /// Zero switches the device off (it announces it on Control and
  /// disconnects); a level above zero switches an off device back on.
  public func setBattery(_ level: Double) async {
    settleBattery()
    battery.level = min(1, max(0, level))
    if battery.level <= 0 {
      await powerOff()
    } else {
      if !isPoweredOn {
        isPoweredOn = true
        await host?.setAdvertisingEnabled(true)
      }
      await notifyBatteryIfChanged()
    }
  }

  /// Changes how fast the battery drains from now on.
  public func setBatteryDrain(_ drain: E4Configuration.BatteryDrain) {
    settleBattery()
    self.drain = drain
  }

  /// Sets the device clock to Unix time `time` (a start command does this too).
  public func setClockTime(_ time: Double) {
    clockBase = time
    clockSetAt = timeline?.elapsed() ?? .zero
  }

  /// Switches the device off: streaming stops, a power-off event goes to
  /// Control, advertising stops and every central is disconnected.
  /// Connections are refused until `setBattery(_:)` gives it charge again,
  /// which starts advertising again.
  public func powerOff() async {
    guard isPoweredOn else { return }
    settleBattery()
    await send(E4Packet.controlEvent(E4Packet.powerOffEvent, time: clockTime), to: Self.control)
    isPoweredOn = false
    endSession()
    if let host {
      // Off the air before the links go, so no central finds it in between.
      await host.setAdvertisingEnabled(false)
      for central in connected { await host.disconnect(central) }
    }
  }

  // MARK: - What can be observed

  /// The device clock, Unix seconds.
  public var clockTime: Double {
    clockBase + ((timeline?.elapsed() ?? .zero) - clockSetAt).seconds
  }

  /// The battery level now, 0…1.
  public var batteryLevel: Double {
    guard let timeline else { return battery.level }
    return battery.level(at: timeline.elapsed(), perHour: drainRate)
  }

  /// Whether a session is streaming.
  public var isStreaming: Bool { session != nil }

  /// The current session's start: Unix time (as the start command gave it).
  public var sessionStartTime: Double? { session?.startTime }

  /// Samples of `signal` taken in the current session (sent, or waiting to fill a packet).
  public func samplesTaken(_ signal: E4Signal) -> Int {
    guard let session, let channel = Self.channel(of: signal) else { return 0 }
    return session.next[channel]
  }

  /// The time on `signal`'s source at which sample `index` of the current
  /// session is (or will be) taken: what a test evaluates a copy of the
  /// source at to know what was sent. `nil` when not streaming.
  public func sourceTime(of signal: E4Signal, sample index: Int) -> Double? {
    guard let session, let channel = Self.channel(of: signal) else { return nil }
    let time = session.startElapsed + channel.time(of: index) - sourceOrigins[signal.index]
    return max(0, time.seconds)
  }

  /// The centrals connected now.
  public var connectedCentrals: [CentralID] { connected }

  // MARK: - PeripheralModel

  public func start(host: any PeripheralHost) async {
    self.host = host
    let timeline = DeviceTimeline(host.clock)
    self.timeline = timeline
    clockSetAt = .zero
    battery.since = .zero
    // An empty wristband does not advertise.
    if !isPoweredOn { await host.setAdvertisingEnabled(false) }
  }

  public func stop() async {
    streamTask?.cancel()
    batteryTask?.cancel()
    streamTask = nil
    batteryTask = nil
    session = nil
  }

  public func centralConnected(_ central: CentralID) async {
    settleBattery()
    connected.append(central)
    guard isPoweredOn else {
      // An empty wristband does not stay connected.
      if let host { Task(executorPreference: Task.currentExecutorPreference) { await host.disconnect(central) } }
      return
    }
    if batteryTask == nil, let timeline {
      batteryTask = Task(executorPreference: Task.currentExecutorPreference) {
        // Once a second while connected: drain, notify a new percentage, switch off when empty.
        await timeline.every(.seconds(1)) { await self.batteryTick() }
      }
    }
  }

  public func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async {
    settleBattery()
    connected.removeAll { $0 == central }
    if connected.isEmpty {
      endSession()
      batteryTask?.cancel()
      batteryTask = nil
    }
  }

  public func read(characteristic: CharacteristicAddress, offset: Int, central: CentralID)
    async throws(ATTError) -> [UInt8]
  {
    let value: [UInt8]
    if characteristic == Self.battery {
      value = E4Packet.battery(percent: E4Packet.batteryPercent(batteryLevel), time: clockTime)
    } else if let initial = profile.characteristic(at: characteristic)?.initialValue {
      value = initial
    } else {
      throw .readNotPermitted
    }
    guard offset <= value.count else { throw .invalidOffset }
    return Array(value[offset...])
  }

  /// The command characteristic takes `0x01` + uint32 LE Unix seconds
  /// (+ optionally uint16 LE milliseconds) to start streaming and `0x02` to
  /// stop; anything else is refused (unknown command: application error 0x80;
  /// wrong length: invalid attribute value length).
  public func write(characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID)
    async throws(ATTError)
  {
    guard characteristic == Self.command else { throw .writeNotPermitted }
    do {
      try await command(value)
    } catch {
      host?.firmwareEvent("refused-command", detail: "\(value.count) bytes: \(error)")
      throw error
    }
  }

  private func command(_ value: [UInt8]) async throws(ATTError) {
    guard let opcode = value.first else { throw .invalidAttributeValueLength }
    switch opcode {
    case E4Packet.startCommand:
      guard value.count == 5 || value.count == 7 else { throw .invalidAttributeValueLength }
      var reader = ByteReader(value, at: 1)
      guard let seconds = reader.uint32() else { throw .invalidAttributeValueLength }
      let milliseconds = reader.uint16() ?? 0
      guard milliseconds < 1000 else { throw .valueNotAllowed }
      guard isPoweredOn else { throw .unlikelyError }
      await startSession(at: Double(seconds) + Double(milliseconds) / 1000)
      host?.firmwareEvent("start-streaming", detail: "device clock set to Unix time \(seconds)")
    case E4Packet.stopCommand:
      guard value.count == 1 else { throw .invalidAttributeValueLength }
      settleBattery()
      endSession()
      host?.firmwareEvent("stop-streaming", detail: "")
    default:
      throw Self.unknownCommand
    }
  }

  // MARK: - Streaming

  private func startSession(at time: Double) async {
    guard let timeline else { return }
    settleBattery()
    setClockTime(time)
    endSession()
    generation += 1
    sessionCount += 1
    session = StreamingSession(
      generation: generation, startTime: time, startElapsed: timeline.elapsed(), configuration: configuration)
    let generation = self.generation
    streamTask = Task(executorPreference: Task.currentExecutorPreference) {
      await Self.stream(model: self, generation: generation, timeline: timeline)
    }
    lastBatteryPercent = nil
    await notifyBatteryIfChanged()
  }

  private func endSession() {
    if let session { interbeatIntervalsSent += session.interbeatIntervalsSent }
    session = nil
    streamTask?.cancel()
    streamTask = nil
  }

  private static func stream(model: E4, generation: Int, timeline: DeviceTimeline) async {
    await timeline.repeatedly(from: timeline.elapsed()) { await model.tick(generation) }
  }

  /// Takes every sample due by now, sends the packets they fill, and
  /// returns when (on the device timeline) the next packet is due; `nil`
  /// when this session is over.
  private func tick(_ generation: Int) async -> Duration? {
    guard var session, session.generation == generation, let timeline else { return nil }
    let elapsed = timeline.elapsed() - session.startElapsed
    var packets: [(CharacteristicAddress, [UInt8])] = []
    // Acceleration first: the beat detector looks at the motion around each beat.
    for channel in StreamingSession.Channel.allCases {
      let due = StreamingSession.due(channel, at: elapsed)
      while !session.ended[channel], session.next[channel] < due {
        let index = session.next[channel]
        let time = session.startElapsed + channel.time(of: index)
        guard sample(channel, index: index, at: time, into: &session, packets: &packets) else {
          // The source ended: what waits goes in a last, shorter packet.
          session.ended[channel] = true
          if let packet = takePacket(channel, endingBefore: index, from: &session) { packets.append(packet) }
          break
        }
        session.next[channel] = index + 1
      }
    }
    self.session = session
    for (address, bytes) in packets {
      if host?.notifyAtOnceOrDrop(bytes, characteristic: address) == false { await send(bytes, to: address) }
      guard self.session?.generation == generation else { return nil }
    }
    guard let next = self.session?.nextPacketDeadline else { return nil }
    return session.startElapsed + next
  }

  /// Takes sample `index` of `channel`, and its packet when that is full;
  /// `false` when its source ended.
  private func sample(
    _ channel: StreamingSession.Channel, index: Int, at time: Duration, into session: inout StreamingSession,
    packets: inout [(CharacteristicAddress, [UInt8])]
  ) -> Bool {
    switch channel {
    case .bvp:
      guard let value = value(of: .bvp, at: time) else { return false }
      let code = E4Packet.bvpCode(value)
      session.bvpCodes.append(code)
      if let interval = session.detector.addBVP(Double(code) / E4Packet.bvpScale) {
        session.interbeatIntervalsSent += 1
        let bytes = E4Packet.interbeatInterval(
          beatIndex: UInt32(interval.beatIndex), samples: UInt16(interval.samples))
        packets.append((Self.interbeatInterval, bytes))
      }
    case .acceleration:
      guard let x = value(of: .accelerationX, at: time), let y = value(of: .accelerationY, at: time),
        let z = value(of: .accelerationZ, at: time)
      else { return false }
      let codes = (x: E4Packet.accelerationCode(x), y: E4Packet.accelerationCode(y), z: E4Packet.accelerationCode(z))
      session.accelerationCodes.append(codes)
      session.detector.addAcceleration(x: codes.x, y: codes.y, z: codes.z)
    case .eda:
      guard let value = value(of: .eda, at: time) else { return false }
      session.edaCodes.append(E4Packet.edaCode(value))
    case .temperature:
      guard let value = value(of: .temperature, at: time) else { return false }
      session.temperatureCodes.append(E4Packet.temperatureCode(value))
    }
    if session.pending(channel) == channel.samplesPerPacket,
      let packet = takePacket(channel, endingBefore: index + 1, from: &session)
    {
      packets.append(packet)
    }
    return true
  }

  /// The packet of the samples waiting in `channel` (full, or shorter when
  /// its source ended), the last of them sample `end − 1`; they then wait no more.
  private func takePacket(
    _ channel: StreamingSession.Channel, endingBefore end: Int, from session: inout StreamingSession
  )
    -> (CharacteristicAddress, [UInt8])?
  {
    guard session.pending(channel) > 0 else { return nil }
    let counter = session.counters[channel]
    session.counters[channel] = counter &+ 1
    defer {
      session.bvpCodes = channel == .bvp ? [] : session.bvpCodes
      session.accelerationCodes = channel == .acceleration ? [] : session.accelerationCodes
      session.edaCodes = channel == .eda ? [] : session.edaCodes
      session.temperatureCodes = channel == .temperature ? [] : session.temperatureCodes
    }
    switch channel {
    case .bvp:
      let first = UInt32(end - session.bvpCodes.count)
      return (Self.bvp, E4Packet.bvp(firstIndex: first, codes: session.bvpCodes))
    case .acceleration:
      return (Self.acceleration, E4Packet.acceleration(session.accelerationCodes, counter: counter))
    case .eda:
      return (Self.eda, E4Packet.eda(session.edaCodes, counter: counter))
    case .temperature:
      return (Self.temperature, E4Packet.temperature(session.temperatureCodes, counter: counter))
    }
  }

  /// The value of `signal`'s source at `time` on the device timeline (its own time from when it was set).
  private func value(of signal: E4Signal, at time: Duration) -> Double? {
    sources[signal.index].value(at: max(0, (time - sourceOrigins[signal.index]).seconds))
  }

  private static func channel(of signal: E4Signal) -> StreamingSession.Channel? {
    switch signal {
    case .bvp: .bvp
    case .eda: .eda
    case .temperature: .temperature
    case .accelerationX, .accelerationY, .accelerationZ: .acceleration
    }
  }

  /// Notifies subscribed centrals; a value nobody listens to is dropped, as on air.
  private func send(_ bytes: [UInt8], to address: CharacteristicAddress) async {
    guard let host else { return }
    do {
      try await host.notify(bytes, characteristic: address)
    } catch {
      // No subscriber, or the link went: the wristband keeps sampling.
    }
  }

  // MARK: - Battery

  private var drainRate: Double {
    guard isPoweredOn else { return 0 }
    if session != nil { return drain.streamingPerHour }
    return connected.isEmpty ? drain.idlePerHour : drain.connectedPerHour
  }

  /// Applies the drain since the last update at the rate of the state it was in.
  private func settleBattery() {
    guard let timeline else { return }
    battery.settle(at: timeline.elapsed(), perHour: drainRate)
  }

  private func notifyBatteryIfChanged() async {
    let percent = E4Packet.batteryPercent(battery.level)
    guard percent != lastBatteryPercent, isPoweredOn else { return }
    lastBatteryPercent = percent
    await send(E4Packet.battery(percent: percent, time: clockTime), to: Self.battery)
  }

  private func batteryTick() async {
    settleBattery()
    if battery.level <= 0 {
      await powerOff()
    } else {
      await notifyBatteryIfChanged()
    }
  }
}
