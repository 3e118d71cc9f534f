import GATT
import Signals
import Synchronization

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
  /// The session, the signals, the preset and the battery: under a lock of
  /// their own, so that the stream loop runs off the actor.
  private nonisolated let state: Mutex<MuseStreamState>
  private var streamTask: Task<Void, Never>?
  private var batteryTask: Task<Void, Never>?

  /// The preset in force.
  public var preset: MusePreset { state.withLock { $0.preset } }
  /// Whether the headband is on (it switches off when its battery empties).
  public var isPoweredOn: Bool { state.withLock { $0.isPoweredOn } }
  /// Commands understood so far, in order.
  public private(set) var commands: [MuseCommand] = []
  /// Streaming sessions started so far.
  public var sessionCount: Int { state.withLock { $0.generation } }
  /// EEG packet indexes sent per channel in the current session (sent or dropped for want of a subscriber).
  public var eegPacketsTaken: Int { state.withLock { $0.session?.taken[MuseStream.eeg.rawValue] ?? 0 } }

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
    let generators = MuseChannel.allCases.map { channel in
      SyntheticEEG(
        channel: channel, parameters: configuration.eeg, seed: SplitMix64.mix(seed &+ UInt64(channel.index) &+ 1),
        scheduleSeed: SplitMix64.mix(seed ^ 0xB1_1C))
    }
    var state = MuseStreamState(
      configuration: configuration, generators: generators, motion: acceleration + rotation, pulse: pulse)
    for (channel, source) in channels { state.channelSources[channel] = (source, .zero) }
    self.state = Mutex(state)
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
    let now = elapsed
    state.withLock { $0.channelSources[channel] = (source, now) }
  }

  /// Replaces one motion axis: `axis` 0–2 acceleration x, y, z (g), 3–5 rotation x, y, z (°/s).
  public func setMotion(_ source: any SignalSource, axis: Int) {
    let now = elapsed
    state.withLock { state in
      guard state.motion.indices.contains(axis) else { return }
      state.motion[axis] = source
      state.motionOrigins[axis] = now
    }
  }

  /// Closes or opens the wearer's eyes; the change takes a second.
  public func setEyesClosed(_ closed: Bool) {
    let now = elapsed
    state.withLock { $0.eyesChange = (now, $0.eyesClosed(at: now), closed ? 1 : 0) }
  }

  /// Puts the headband on the head or takes it off (the electrodes lose contact).
  public func setOnHead(_ onHead: Bool) { state.withLock { $0.conditions.onHead = onHead } }

  /// Starts or stops a burst of muscle activity (a clenched jaw).
  public func setMuscle(_ tense: Bool) { state.withLock { $0.conditions.muscle = tense } }

  /// Sets the battery level (0…1); zero switches the headband off (it
  /// disconnects), a level above zero switches an off headband back on
  /// (it advertises again).
  public func setBattery(_ level: Double) async {
    if level <= 0, isPoweredOn {
      // What was sampled before it emptied goes out with the level it had then.
      await catchUp()
    }
    let now = elapsed
    let (empty, switchesOn) = state.withLock { state in
      state.settleBattery(at: now)
      state.battery.level = min(1, max(0, level))
      let switchesOn = state.battery.level > 0 && !state.isPoweredOn
      if switchesOn { state.isPoweredOn = true }
      return (state.battery.level <= 0, switchesOn)
    }
    if empty {
      await switchOff()
    } else if switchesOn {
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
    let now = elapsed
    let wasOn = state.withLock { state in
      guard state.isPoweredOn else { return false }
      state.settleBattery(at: now)
      state.isPoweredOn = false
      return true
    }
    guard wasOn else { return }
    endSession()
    if let host {
      // Off the air before the links go, so no central finds it in between.
      await host.setAdvertisingEnabled(false)
      for central in state.withLock({ $0.connected }) { await host.disconnect(central) }
    }
  }

  // MARK: - What can be observed

  /// The battery level now, 0…1.
  public var batteryLevel: Double {
    guard let timeline else { return state.withLock { $0.battery.level } }
    let now = timeline.elapsed()
    return state.withLock { $0.batteryLevel(at: now) }
  }

  /// Whether a session is streaming.
  public var isStreaming: Bool { state.withLock { $0.session != nil } }

  /// Whether the electrodes touch the skin.
  public var isOnHead: Bool { state.withLock { $0.conditions.onHead } }

  /// Time on the timeline now (zero before hosting starts).
  private var elapsed: Duration { timeline?.elapsed() ?? .zero }

  /// The centrals connected now.
  public var connectedCentrals: [CentralID] { state.withLock { $0.connected } }

  // MARK: - PeripheralModel

  public func start(host: any PeripheralHost) async {
    self.host = host
    timeline = DeviceTimeline(host.clock)
    state.withLock { $0.battery.since = .zero }
    // An empty headband does not advertise.
    if !isPoweredOn { await host.setAdvertisingEnabled(false) }
  }

  /// Returns once the session has sent every packet due by now (15 s at
  /// most: then what is left is not sent), and sends nothing sampled after
  /// it: the end of a run or a switch-off follows. Its sets wait for the
  /// host to take the last before AF7 goes (``tick(_:)``), and a busy host
  /// leaves them behind the timeline (2 s seen in a loaded lab).
  public func catchUp() async {
    guard let timeline, let host else { return }
    let now = timeline.elapsed()
    let clock = ContinuousClock()
    let deadline = clock.now + Self.catchUpLimit
    let cut = state.withLock { state -> (generation: Int, due: Int64)? in
      guard let session = state.session else { return nil }
      let due = (now - session.start).nanoseconds
      state.session?.cutOff = min(due, session.cutOff ?? .max)
      state.catchUpLimit = deadline
      return (session.generation, due)
    }
    guard let (generation, due) = cut else { return }
    defer { state.withLock { $0.catchUpLimit = nil } }
    while clock.now < deadline {
      let behind = state.withLock { state in
        guard let current = state.session, current.generation == generation else { return false }
        return state.streams.contains { current.sent[$0.rawValue] < $0.packetsDue(afterNanoseconds: due) }
      }
      guard behind else { return }
      // Send from here only if nothing is on its way (the tick due has not
      // run yet: in the loopback, one due at this very instant), decided
      // under the same lock as the take, as the stream loop's tick may run
      // at once on another thread.
      if case .busy = await sendDue(generation, host: host, timeline: timeline, unlessSending: true) {
        // A tick the host holds back: it is on the wall clock.
        do { try await clock.sleep(for: .milliseconds(5)) } catch { return }
      }
    }
  }

  /// How long ``catchUp()`` waits at most.
  static let catchUpLimit: Duration = .seconds(15)

  public func stop() async {
    endSession()
    batteryTask?.cancel()
    batteryTask = nil
  }

  public func centralConnected(_ central: CentralID) async {
    let now = elapsed
    let poweredOn = state.withLock { state in
      state.settleBattery(at: now)
      state.connected.append(central)
      return state.isPoweredOn
    }
    guard poweredOn else {
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
    let now = elapsed
    let alone = state.withLock { state in
      state.settleBattery(at: now)
      state.connected.removeAll { $0 == central }
      return state.connected.isEmpty
    }
    if alone {
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
      if !isStreaming { startSession() }
      await answer(Self.ok)
    case .keepAlive:
      host?.firmwareEvent("keep-alive", detail: "")
      await answer(Self.ok)
    case .reset:
      host?.firmwareEvent("reset", detail: "")
      settleBattery()
      endSession()
      state.withLock { $0.preset = configuration.preset }
      await answer(Self.ok)
    case .preset(let name):
      if let chosen = MusePreset.named(name) {
        host?.firmwareEvent("preset", detail: name)
        state.withLock { $0.preset = chosen }
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
    guard let timeline, let host else { return }
    let now = timeline.elapsed()
    let generation = state.withLock { state in
      state.settleBattery(at: now)
      state.generation += 1
      state.session = MuseStreamState.Session(generation: state.generation, start: now)
      return state.generation
    }
    streamTask = Task(executorPreference: Task.currentExecutorPreference) {
      await timeline.repeatedly(from: now) { await self.tick(generation, host: host, timeline: timeline) }
    }
  }

  private func endSession() {
    state.withLock { $0.session = nil }
    streamTask?.cancel()
    streamTask = nil
  }

  /// Sends every packet of session `generation` due by now and returns when
  /// the next one is due (on the device timeline); `nil` when that session
  /// is over. Off the actor: the packets are made under the state's lock,
  /// and sent after it is released.
  private nonisolated(nonsending) func tick(_ generation: Int, host: any PeripheralHost, timeline: DeviceTimeline)
    async -> Duration?
  {
    switch await sendDue(generation, host: host, timeline: timeline, unlessSending: false) {
    case .next(let next): next
    case .over, .busy: nil
    }
  }

  /// What ``sendDue(_:host:timeline:unlessSending:)`` did.
  private enum Sending {
    /// It sent what was due; the next packet is due then.
    case next(Duration)
    /// The session is over (ended, or cut off and all sent).
    case over
    /// Another tick was sending, and it was asked to take nothing then.
    case busy
  }

  /// A tick's work: takes every packet of session `generation` due by now
  /// under the state's lock (nothing if `unlessSending` and another tick is
  /// sending: decided in the same lock), then sends them.
  private nonisolated(nonsending) func sendDue(
    _ generation: Int, host: any PeripheralHost, timeline: DeviceTimeline, unlessSending: Bool
  ) async -> Sending {
    let now = timeline.elapsed()
    var packets: [(CharacteristicAddress, [UInt8])] = []
    var taken = InlineArray<5, Int>(repeating: 0)
    let outcome = state.withLock { state -> Sending in
      if unlessSending, state.sendingTicks > 0 { return .busy }
      packets = state.lendPacketList()
      guard let next = state.takePacketsDue(generation, at: now, into: &packets), let session = state.session
      else {
        state.returnPacketList(&packets)
        return .over
      }
      state.sendingTicks += 1
      taken = session.taken
      return .next(next)
    }
    guard case .next = outcome else { return outcome }
    defer {
      state.withLock { state in
        state.sendingTicks -= 1
        state.returnPacketList(&packets)
      }
    }
    // A host that delivers in order needs no wait between them.
    let inOrder = host.deliversInOrder
    let af7 = Self.eeg(.af7)
    for (address, bytes) in packets {
      // Before each packet: a halt or a switch-off may come in on the actor
      // while the tick runs (over BlueZ, on another thread), and a
      // catch-up that gave up means silence or a switch-off next.
      let goesOn = state.withLock { state in
        state.session?.generation == generation && (state.catchUpLimit.map { ContinuousClock.now < $0 } ?? true)
      }
      guard goesOn else { return .over }
      // muse-lsl files a set of EEG packets when AF7, sent last, arrives: the
      // other four must be taken before it, and it before the next set's.
      if !inOrder, address == af7 { await host.notificationsTaken() }
      if !host.notifyAtOnceOrDrop(bytes, characteristic: address) { await Self.send(bytes, to: address, on: host) }
      if !inOrder, address == af7 { await host.notificationsTaken() }
    }
    // Cut off (``catchUp()``): once all before the cut-off is taken, nothing more.
    let over = state.withLock { $0.finishSending(generation, taken: taken) }
    return over ? .over : outcome
  }

  /// Notifies subscribed centrals; a value nobody listens to is dropped, as on air.
  private func send(_ bytes: [UInt8], to address: CharacteristicAddress) async {
    guard let host else { return }
    await Self.send(bytes, to: address, on: host)
  }

  private nonisolated static func send(_ bytes: [UInt8], to address: CharacteristicAddress, on host: any PeripheralHost)
    async
  {
    do {
      try await host.notify(bytes, characteristic: address)
    } catch {
      // No subscriber, or the link went: the headband keeps sampling.
    }
  }

  // MARK: - Battery

  /// Applies the drain since the last update at the rate of the state it was in.
  private func settleBattery() {
    let now = elapsed
    state.withLock { $0.settleBattery(at: now) }
  }

  private func batteryTick() async {
    let now = elapsed
    let empty = state.withLock { state in
      state.settleBattery(at: now)
      return state.battery.level <= 0
    }
    if empty { await powerOff() }
  }
}
