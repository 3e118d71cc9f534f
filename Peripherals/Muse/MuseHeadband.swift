import GATT
import Signals

/// An emulated Muse EEG headband on the protocol muse-lsl and muse-js read
/// (README.md): the Interaxon service `FE8D`, a control characteristic that
/// takes length-prefixed ASCII commands and answers in JSON, five EEG
/// channels at 256 Hz in 12-sample packets, accelerometer and gyroscope at
/// 52 Hz, telemetry with the battery, and PPG on a Muse 2 or S.
///
/// Streaming starts on `d` and stops on `h`, `*1`, or when the last central
/// leaves. The EEG is synthetic (``SyntheticEEG``) unless a scenario gives a
/// channel a source of its own (a muse-lsl recording); a source set with
/// `setSource(_:for:)` starts at its own time zero when set.
public actor MuseHeadband: PeripheralModel {
  public static let service = BluetoothUUID(0xFE8D)
  /// Commands in, answers out.
  public static let control = address(0x0001)
  public static let gyroscope = address(0x0009)
  public static let accelerometer = address(0x000A)
  public static let telemetry = address(0x000B)
  /// PPG: ambient, infrared, red (Muse 2 and S).
  public static let ppg = [address(0x000F), address(0x0010), address(0x0011)]

  /// The characteristic of an EEG channel (`273e0003` for TP9 … `273e0007` for AUX).
  public static func eeg(_ channel: MuseChannel) -> CharacteristicAddress {
    eegAddresses[channel.index]
  }

  /// The EEG channels' characteristics by `MuseChannel.index`: made once,
  /// as every packet sent looks its channel's up (parsing the UUID's text
  /// each time took half of a loopback run's CPU).
  private static let eegAddresses = MuseChannel.allCases.map { address(UInt16(0x0003 + $0.index)) }

  /// `273e00NN-4c4d-454d-96be-f03bac821358`.
  public static func uuid(_ number: UInt16) -> BluetoothUUID {
    let hex = String(number, radix: 16)
    // The text is a valid UUID for every number; a failure here is a programming error.
    return try! BluetoothUUID(
      string: "273e" + String(repeating: "0", count: 4 - hex.count) + hex + "-4c4d-454d-96be-f03bac821358")
  }

  private static func address(_ number: UInt16) -> CharacteristicAddress {
    CharacteristicAddress(service: service, characteristic: uuid(number))
  }

  /// The answer to a command that worked, and to one that did not (this project's code).
  static let ok = "{\"rc\":0}"
  static let refused = "{\"rc\":1}"

  public nonisolated let profile: GATTProfile
  public nonisolated let advertisement: AdvertisementData
  public nonisolated let configuration: MuseConfiguration

  private var host: (any PeripheralHost)?
  private var timeline: DeviceTimeline?
  private var connected: [CentralID] = []
  private var generators: [SyntheticEEG]
  /// Samples the AUX generator has not taken while AUX was neither sent nor recorded.
  private var auxSamplesOwed = 0
  /// A scenario's source per channel, in place of the synthetic EEG, and when it was set.
  private var channelSources: [MuseChannel: (source: any SignalSource, origin: Duration)] = [:]
  /// Accelerometer (g) then gyroscope (°/s), x, y, z, and when each was set.
  private var motion: [any SignalSource]
  private var motionOrigins = [Duration](repeating: .zero, count: 6)
  private var pulse: any SignalSource
  private var conditions = SyntheticEEG.Conditions()
  /// The eyes' last change: when, from what, to what (they take a second).
  private var eyesChange: (at: Duration, from: Double, to: Double) = (.zero, 0, 0)
  private var session: Session?
  private var generation = 0
  private var streamTask: Task<Void, Never>?
  /// Ticks sending their packets now (`tick` awaits each send).
  private var sendingTicks = 0
  /// While a catch-up runs: when it gives up, and the ticks stop sending.
  private var catchUpLimit: ContinuousClock.Instant?
  private var batteryTask: Task<Void, Never>?
  private var battery: DrainingBattery

  /// The preset in force.
  public private(set) var preset: MusePreset
  /// Whether the headband is on (it switches off when its battery empties).
  public private(set) var isPoweredOn: Bool
  /// Commands understood so far, in order.
  public private(set) var commands: [MuseCommand] = []
  /// Streaming sessions started so far.
  public private(set) var sessionCount = 0
  /// EEG packet indexes sent per channel in the current session (sent or dropped for want of a subscriber).
  public var eegPacketsTaken: Int { session?.taken[MuseStream.eeg.rawValue] ?? 0 }

  /// What one streaming session has sent.
  private struct Session {
    var generation: Int
    var start: Duration
    /// Packets taken per stream, by `MuseStream.rawValue` (held in place:
    /// a session is copied and written back each tick, and arrays made each
    /// write a copy of their storage).
    var taken = InlineArray<5, Int>(repeating: 0)
    /// Packets whose sending has finished per stream (taken, then handed to the host).
    var sent = InlineArray<5, Int>(repeating: 0)
    /// Set by ``catchUp()``: nothing sampled after this (ns into the session) is sent.
    var cutOff: Int64?
    var telemetryIndex: UInt16 = 0
  }

  /// - Parameters:
  ///   - configuration: identity, hardware, battery, the wearer.
  ///   - seed: the synthetic EEG's seed (each channel and the blink schedule derive theirs from it).
  ///   - channels: sources replacing the synthetic EEG of some channels (µV).
  ///   - acceleration: x, y, z in g (default: upright, 1 g along z).
  ///   - rotation: x, y, z in °/s (default: still).
  ///   - pulse: the PPG's pulse wave (sent on infrared and red, scaled to 24-bit counts).
  public init(
    configuration: MuseConfiguration = MuseConfiguration(), seed: UInt64 = 1,
    channels: [MuseChannel: any SignalSource] = [:],
    acceleration: [any SignalSource] = [ConstantSignal(0), ConstantSignal(0), ConstantSignal(1)],
    rotation: [any SignalSource] = [ConstantSignal(0), ConstantSignal(0), ConstantSignal(0)],
    pulse: any SignalSource = SyntheticPPG()
  ) {
    precondition(acceleration.count == 3 && rotation.count == 3, "three axes each")
    self.configuration = configuration
    generators = MuseChannel.allCases.map { channel in
      SyntheticEEG(
        channel: channel, parameters: configuration.eeg, seed: SplitMix64.mix(seed &+ UInt64(channel.index) &+ 1),
        scheduleSeed: SplitMix64.mix(seed ^ 0xB1_1C))
    }
    for (channel, source) in channels { channelSources[channel] = (source, .zero) }
    motion = acceleration + rotation
    self.pulse = pulse
    preset = configuration.preset
    battery = DrainingBattery(level: configuration.batteryLevel)
    isPoweredOn = configuration.batteryLevel > 0
    advertisement = AdvertisementData(localName: configuration.name, serviceUUIDs: [Self.service])
    profile = Self.makeProfile(variant: configuration.variant)
  }

  /// The characteristics in the real headband's order and at its handles
  /// (muse-lsl lists them: the service at 0x000c, each characteristic three
  /// handles from declaration to CCCD), so that a central that addresses the
  /// headband by handle finds them where a real one has them. Those the
  /// emulation does not stream (left AUX, REF/DRL, magnetometer, pressure,
  /// UV, thermistor) are there and stay silent, as on a real headband that
  /// does not send them. The PPG is on a Muse 2 and S, the thermistor on a
  /// Muse S.
  private static func makeProfile(variant: MuseConfiguration.Variant) -> GATTProfile {
    var layout: [(number: UInt16, name: String)] = [
      (0x0001, "Control"), (0x0008, "Reference"), (0x0009, "Gyroscope"), (0x000A, "Accelerometer"),
      (0x000B, "Telemetry"), (0x0002, "Left AUX"),
    ]
    layout += MuseChannel.allCases.map { (0x0003 + UInt16($0.index), $0.rawValue.uppercased()) }
    layout += [(0x000C, "Magnetometer"), (0x000D, "Pressure"), (0x000E, "Ultraviolet")]
    if variant.hasPPG { layout += [(0x000F, "PPG Ambient"), (0x0010, "PPG Infrared"), (0x0011, "PPG Red")] }
    if variant == .museS { layout.append((0x0012, "Thermistor")) }
    let characteristics = layout.enumerated().map { i, entry in
      let handle = firstValueHandle + 3 * UInt16(i)
      return entry.number == 0x0001
        ? CharacteristicDefinition(
          uuid(0x0001), name: entry.name, properties: [.write, .writeWithoutResponse, .notify],
          maximumLength: MusePacket.length, handle: handle)
        : CharacteristicDefinition(uuid(entry.number), name: entry.name, properties: [.notify], handle: handle)
    }
    // The definitions are fixed and valid; a failure here is a programming error.
    return try! GATTProfile([
      ServiceDefinition(service, name: "Muse", handle: serviceHandle, characteristics: characteristics)
    ])
  }

  /// Where a real headband's `FE8D` service starts, and its first value (Control's).
  static let serviceHandle: UInt16 = 0x000C
  static let firstValueHandle: UInt16 = 0x000E

  // MARK: - What a scenario drives

  /// Replaces what `channel` carries (µV); the source's time zero is now.
  public func setSource(_ source: any SignalSource, for channel: MuseChannel) {
    channelSources[channel] = (source, timeline?.elapsed() ?? .zero)
  }

  /// Replaces one motion axis: `axis` 0–2 acceleration x, y, z (g), 3–5 rotation x, y, z (°/s).
  public func setMotion(_ source: any SignalSource, axis: Int) {
    guard motion.indices.contains(axis) else { return }
    motion[axis] = source
    motionOrigins[axis] = timeline?.elapsed() ?? .zero
  }

  /// Closes or opens the wearer's eyes; the change takes a second.
  public func setEyesClosed(_ closed: Bool) {
    let now = timeline?.elapsed() ?? .zero
    eyesChange = (now, eyesClosed(at: now), closed ? 1 : 0)
  }

  /// Puts the headband on the head or takes it off (the electrodes lose contact).
  public func setOnHead(_ onHead: Bool) { conditions.onHead = onHead }

  /// Starts or stops a burst of muscle activity (a clenched jaw).
  public func setMuscle(_ tense: Bool) { conditions.muscle = tense }

  /// Sets the battery level (0…1); zero switches the headband off (it
  /// disconnects), a level above zero switches an off headband back on
  /// (it advertises again).
  public func setBattery(_ level: Double) async {
    if level <= 0, isPoweredOn {
      // What was sampled before it emptied goes out with the level it had then.
      await catchUp()
    }
    settleBattery()
    battery.level = min(1, max(0, level))
    if battery.level <= 0 {
      await switchOff()
    } else if !isPoweredOn {
      isPoweredOn = true
      await host?.setAdvertisingEnabled(true)
    }
  }

  /// Switches the headband off: streaming stops, advertising stops and
  /// every central is disconnected. What it sampled before that goes out
  /// first (``catchUp()``): only a host slow to take it held it back.
  public func powerOff() async {
    guard isPoweredOn else { return }
    await catchUp()
    await switchOff()
  }

  /// Switches off at once: what is not sent by now is lost.
  private func switchOff() async {
    // Another switch-off may have finished while a catch-up waited.
    guard isPoweredOn else { return }
    settleBattery()
    isPoweredOn = false
    endSession()
    if let host {
      // Off the air before the links go, so no central finds it in between.
      await host.setAdvertisingEnabled(false)
      for central in connected { await host.disconnect(central) }
    }
  }

  // MARK: - What can be observed

  /// The battery level now, 0…1.
  public var batteryLevel: Double {
    guard let timeline else { return battery.level }
    return battery.level(at: timeline.elapsed(), perHour: drainRate)
  }

  /// Whether a session is streaming.
  public var isStreaming: Bool { session != nil }

  /// Whether the electrodes touch the skin.
  public var isOnHead: Bool { conditions.onHead }

  /// The centrals connected now.
  public var connectedCentrals: [CentralID] { connected }

  // MARK: - PeripheralModel

  public func start(host: any PeripheralHost) async {
    self.host = host
    timeline = DeviceTimeline(host.clock)
    battery.since = .zero
    // An empty headband does not advertise.
    if !isPoweredOn { await host.setAdvertisingEnabled(false) }
  }

  /// Returns once the session has sent every packet due by now (15 s at
  /// most: then what is left is not sent), and sends nothing sampled after
  /// it: the end of a run or a switch-off follows. Its sets wait for the
  /// host to take the last before AF7 goes (``tick(_:)``), and a busy host
  /// leaves them behind the timeline (2 s seen in a loaded lab).
  public func catchUp() async {
    guard let timeline, let session else { return }
    let generation = session.generation
    let due = (timeline.elapsed() - session.start).nanoseconds
    self.session?.cutOff = min(due, session.cutOff ?? .max)
    let clock = ContinuousClock()
    let deadline = clock.now + Self.catchUpLimit
    catchUpLimit = deadline
    defer { catchUpLimit = nil }
    while clock.now < deadline, let current = self.session, current.generation == generation {
      let behind = streams.contains { current.sent[$0.rawValue] < $0.packetsDue(afterNanoseconds: due) }
      guard behind else { return }
      if sendingTicks == 0 {
        // Nothing on its way: the tick due has not run yet (in the
        // loopback, one due at this very instant). Send from here.
        _ = await tick(generation)
      } else {
        // A tick the host holds back: it is on the wall clock.
        do { try await clock.sleep(for: .milliseconds(5)) } catch { return }
      }
    }
  }

  /// How long ``catchUp()`` waits at most.
  static let catchUpLimit: Duration = .seconds(15)

  /// The streams this headband sends: PPG only on a variant with it, in a preset that has it on.
  private var streams: [MuseStream] {
    configuration.variant.hasPPG && preset.ppg ? Self.everyStream : Self.streamsButPPG
  }

  /// The two lists ``streams`` returns, made once (a tick asks for one).
  private static let everyStream = MuseStream.allCases
  private static let streamsButPPG = MuseStream.allCases.filter { $0 != .ppg }

  public func stop() async {
    endSession()
    batteryTask?.cancel()
    batteryTask = nil
  }

  public func centralConnected(_ central: CentralID) async {
    settleBattery()
    connected.append(central)
    guard isPoweredOn else {
      // An empty headband does not stay connected.
      if let host { Task(executorPreference: Task.currentExecutorPreference) { await host.disconnect(central) } }
      return
    }
    if batteryTask == nil, let timeline {
      batteryTask = Task(executorPreference: Task.currentExecutorPreference) {
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

  /// Takes a command on the control characteristic and answers it there.
  /// A write that is not a framed command is refused (README.md, "Bad input").
  public func write(characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID)
    async throws(ATTError)
  {
    guard characteristic == Self.control else { throw .writeNotPermitted }
    let command: MuseCommand
    do {
      command = try MuseCommand(frame: value)
    } catch {
      host?.firmwareEvent("refused-command", detail: "\(value.count) bytes: \(error)")
      switch error {
      case .empty, .lengthMismatch: throw .invalidAttributeValueLength
      case .missingNewline, .notASCII: throw .valueNotAllowed
      }
    }
    guard isPoweredOn else { throw .unlikelyError }
    commands.append(command)
    await perform(command)
  }

  // MARK: - Commands

  private func perform(_ command: MuseCommand) async {
    switch command {
    case .version:
      host?.firmwareEvent("version", detail: "")
      await answer(
        "{\"ap\":\"headset\",\"sp\":\"Blackcomb_rev1\",\"tp\":\"consumer\",\"hw\":\"3.1\",\"bn\":27,"
          + "\"fw\":\"3.4.16\",\"bl\":\"1.2.3\",\"pv\":1,\"rc\":0}")
    case .status:
      host?.firmwareEvent("status", detail: "")
      let percent = Int((batteryLevel * 100).rounded())
      let serialDigits = configuration.serialNumber.filter(\.isHexDigit).lowercased()
      let mac =
        "00-55-da-b" + String(serialDigits.prefix(1)) + "-" + String(serialDigits.dropFirst(1).prefix(2)) + "-"
        + String(serialDigits.dropFirst(3).prefix(2))
      await answer(
        "{\"hn\":\"\(configuration.name)\",\"sn\":\"\(configuration.serialNumber)\",\"ma\":\"\(mac)\","
          + "\"id\":\"\(serialDigits.prefix(8))\",\"bp\":\(percent),\"ts\":0,\"ps\":\(preset.number),\"rc\":0}")
    case .halt:
      host?.firmwareEvent("stop-streaming", detail: "")
      settleBattery()
      endSession()
      await answer(Self.ok)
    case .resume:
      host?.firmwareEvent("start-streaming", detail: "preset p\(preset.number)")
      if session == nil { startSession() }
      await answer(Self.ok)
    case .keepAlive:
      host?.firmwareEvent("keep-alive", detail: "")
      await answer(Self.ok)
    case .reset:
      host?.firmwareEvent("reset", detail: "")
      settleBattery()
      endSession()
      preset = configuration.preset
      await answer(Self.ok)
    case .preset(let name):
      if let chosen = MusePreset.named(name) {
        host?.firmwareEvent("preset", detail: name)
        preset = chosen
        await answer(Self.ok)
      } else {
        host?.firmwareEvent("unknown-command", detail: name)
        await answer(Self.refused)
      }
    case .unknown(let text):
      host?.firmwareEvent("unknown-command", detail: text)
      await answer(Self.refused)
    }
  }

  private func answer(_ text: String) async {
    for packet in MusePacket.controlAnswer(text) { await send(packet, to: Self.control) }
  }

  // MARK: - Streaming

  private func startSession() {
    guard let timeline else { return }
    settleBattery()
    generation += 1
    sessionCount += 1
    session = Session(generation: generation, start: timeline.elapsed())
    let generation = self.generation
    streamTask = Task(executorPreference: Task.currentExecutorPreference) {
      await timeline.repeatedly(from: timeline.elapsed()) { await self.tick(generation) }
    }
  }

  private func endSession() {
    session = nil
    streamTask?.cancel()
    streamTask = nil
  }

  /// Sends every packet due by now and returns when the next one is due
  /// (on the device timeline); `nil` when this session is over.
  private func tick(_ generation: Int) async -> Duration? {
    guard var session, session.generation == generation, let timeline else { return nil }
    let elapsed = min((timeline.elapsed() - session.start).nanoseconds, session.cutOff ?? .max)
    var packets: [(CharacteristicAddress, [UInt8])] = []
    packets.reserveCapacity(8)
    var next = Int64.max
    let streams = self.streams
    for stream in streams {
      let due = stream.packetsDue(afterNanoseconds: elapsed)
      while session.taken[stream.rawValue] < due {
        let k = session.taken[stream.rawValue]
        self.packets(stream, number: k, session: &session, into: &packets)
        session.taken[stream.rawValue] = k + 1
      }
      next = min(next, stream.deadline(ofPacket: session.taken[stream.rawValue]))
    }
    self.session = session
    sendingTicks += 1
    defer { sendingTicks -= 1 }
    let host = self.host
    // A host that delivers in order needs no wait between them.
    let inOrder = host?.deliversInOrder ?? true
    let af7 = Self.eeg(.af7)
    for (address, bytes) in packets {
      // muse-lsl files a set of EEG packets when AF7, sent last, arrives: the
      // other four must be taken before it, and it before the next set's.
      if !inOrder, address == af7 { await host?.notificationsTaken() }
      if host?.notifyAtOnceOrDrop(bytes, characteristic: address) == false { await send(bytes, to: address) }
      if !inOrder, address == af7 { await host?.notificationsTaken() }
      guard self.session?.generation == generation else { return nil }
      // A catch-up that gave up: silence or a switch-off comes next.
      if let limit = catchUpLimit, ContinuousClock.now >= limit { return nil }
    }
    let taken = session.taken
    if var current = self.session {
      for stream in taken.indices { current.sent[stream] = max(current.sent[stream], taken[stream]) }
      self.session = current
    }
    // Cut off (``catchUp()``): once all before the cut-off is taken, nothing more.
    if let cutOff = session.cutOff,
      streams.allSatisfy({ taken[$0.rawValue] >= $0.packetsDue(afterNanoseconds: cutOff) })
    {
      return nil
    }
    return session.start + .nanoseconds(next)
  }

  /// Packet `k` of `stream`, its samples taken now, appended to `packets`
  /// (one per EEG channel sent).
  private func packets(
    _ stream: MuseStream, number k: Int, session: inout Session, into packets: inout [(CharacteristicAddress, [UInt8])]
  ) {
    let index = UInt16(truncatingIfNeeded: k)
    let first = k * Int(stream.perPacket)
    /// Sample `n`'s time (of the whole session, from 0).
    func time(_ n: Int) -> Duration { session.start + .nanoseconds(Int64(n) * 1_000_000_000 / stream.rate) }
    switch stream {
    case .eeg:
      let perPacket = MusePacket.eegSamplesPerPacket
      var now = conditions
      // Taken out for the loop, so that each sample is not an access to the actor's storage.
      var generators: [SyntheticEEG] = []
      swap(&generators, &self.generators)
      defer { swap(&generators, &self.generators) }
      // An AUX that is not sent and carries no recording is not sampled
      // until it is (its samples do not depend on the conditions, so
      // catching up gives the same ones).
      let aux = MuseChannel.aux.index
      let skipsAux = !preset.aux && channelSources[.aux] == nil
      if !skipsAux {
        for _ in 0..<auxSamplesOwed { _ = generators[aux].next(now) }
        auxSamplesOwed = 0
      }
      // The eyes' value is the same for every sample but while they move,
      // and only a recording needs the sample's time otherwise.
      let timed = eyesChange.from != eyesChange.to || !channelSources.isEmpty
      let channels = generators.count
      // Each channel's twelve codes in a row, channel by channel.
      withUnsafeTemporaryAllocation(of: UInt16.self, capacity: channels * perPacket) { codes in
        codes.initialize(repeating: 0)
        generators.withUnsafeMutableBufferPointer { generators in
          for sample in 0..<perPacket {
            let time = timed ? time(first + sample) : .zero
            now.eyesClosed = timed ? eyesClosed(at: time) : eyesChange.from
            // Every channel's schedule of blinks and bursts is the headband's: taken once.
            let events = generators[0].nextEvents()
            for channel in 0..<channels where !(skipsAux && channel == aux) {
              // The synthetic EEG runs on under a recording, so the channels stay in step.
              var value = generators[channel].next(now, events: events)
              if !channelSources.isEmpty, let (source, origin) = channelSources[generators[channel].channel] {
                var copy = source
                value = copy.value(at: max(0, (time - origin).seconds)) ?? value
                channelSources[generators[channel].channel] = (copy, origin)
              }
              codes[channel * perPacket + sample] = MusePacket.eegCode(value)
            }
          }
        }
        for channel in MuseChannel.sendingOrder where channel != .aux || preset.aux {
          let row = channel.index * perPacket
          packets.append(
            (
              Self.eeg(channel),
              MusePacket.eeg(index: index, codes: UnsafeBufferPointer(rebasing: codes[row..<(row + perPacket)]))
            )
          )
        }
      }
      if skipsAux { auxSamplesOwed += perPacket }
    case .accelerometer, .gyroscope:
      let base = stream == .accelerometer ? 0 : 3
      // Each axis's source at the sample's time from its own time zero, in seconds.
      let origins = (
        (session.start - motionOrigins[base]).seconds, (session.start - motionOrigins[base + 1]).seconds,
        (session.start - motionOrigins[base + 2]).seconds
      )
      var samples: [(x: Int16, y: Int16, z: Int16)] = []
      samples.reserveCapacity(Int(stream.perPacket))
      for sample in 0..<Int(stream.perPacket) {
        let since = Double(first + sample) / Double(stream.rate)
        let (x, y, z) = (
          motionValue(base, since + origins.0), motionValue(base + 1, since + origins.1),
          motionValue(base + 2, since + origins.2)
        )
        samples.append(
          stream == .accelerometer
            ? (MusePacket.accelerationCode(x), MusePacket.accelerationCode(y), MusePacket.accelerationCode(z))
            : (MusePacket.gyroCode(x), MusePacket.gyroCode(y), MusePacket.gyroCode(z)))
      }
      packets.append(
        (stream == .accelerometer ? Self.accelerometer : Self.gyroscope, MusePacket.imu(index: index, samples: samples))
      )
    case .ppg:
      let wave = (first..<(first + Int(stream.perPacket))).map { n in
        pulse.value(at: max(0, (time(n) - session.start).seconds)) ?? 0
      }
      let ambient = [UInt32](repeating: 2_000, count: 6)
      let infrared = wave.map { UInt32(max(0, 200_000 + 20_000 * $0)) }
      let red = wave.map { UInt32(max(0, 150_000 + 15_000 * $0)) }
      for (address, codes) in zip(Self.ppg, [ambient, infrared, red]) {
        packets.append((address, MusePacket.ppg(index: index, codes: codes)))
      }
    case .telemetry:
      settleBattery()
      let percent = batteryLevel * 100
      // A Li-ion cell from 3.3 V empty to 4.2 V full.
      let millivolts = 3300 + 900 * batteryLevel
      packets.append(
        (
          Self.telemetry,
          MusePacket.telemetry(
            index: index, batteryPercent: percent, fuelGaugeMillivolts: millivolts, temperature: 96)
        ))
    }
  }

  /// Motion `axis`'s value `seconds` after its source was set.
  private func motionValue(_ axis: Int, _ seconds: Double) -> Double {
    motion[axis].value(at: max(0, seconds)) ?? 0
  }

  /// How closed the eyes are at `time`: they move from the last change's
  /// value to its target over a second.
  private func eyesClosed(at time: Duration) -> Double {
    let progress = min(1, max(0, (time - eyesChange.at).seconds))
    return eyesChange.from + (eyesChange.to - eyesChange.from) * progress
  }

  /// Notifies subscribed centrals; a value nobody listens to is dropped, as on air.
  private func send(_ bytes: [UInt8], to address: CharacteristicAddress) async {
    guard let host else { return }
    do {
      try await host.notify(bytes, characteristic: address)
    } catch {
      // No subscriber, or the link went: the headband keeps sampling.
    }
  }

  // MARK: - Battery

  private var drainRate: Double {
    guard isPoweredOn, !connected.isEmpty else { return 0 }
    return session != nil ? configuration.batteryDrainPerHour : configuration.batteryDrainPerHour / 4
  }

  /// Applies the drain since the last update at the rate of the state it was in.
  private func settleBattery() {
    guard let timeline else { return }
    battery.settle(at: timeline.elapsed(), perHour: drainRate)
  }

  private func batteryTick() async {
    settleBattery()
    if battery.level <= 0 { await powerOff() }
  }
}
