import GATT
import Signals

/// What a headband samples and sends, and the battery it drains: the
/// streaming session, the EEG generators and the scenario's sources, the
/// wearer's conditions, the preset and the power.
///
/// Held by ``MuseHeadband`` under a lock, apart from its actor, so that the
/// stream loop makes a tick's packets without a switch to the actor and
/// back: two of a tick's three jobs on the loopback's executor.
struct MuseStreamState: Sendable {
  /// What one streaming session has sent.
  struct Session: Sendable {
    var generation: Int
    var start: Duration
    /// Packets taken per stream, by `MuseStream.rawValue` (held in place:
    /// a session is copied and written back each tick, and arrays made each
    /// write a copy of their storage).
    var taken = InlineArray<5, Int>(repeating: 0)
    /// Packets whose sending has finished per stream (taken, then handed to the host).
    var sent = InlineArray<5, Int>(repeating: 0)
    /// Set by `MuseHeadband.catchUp()`: nothing sampled after this (ns into the session) is sent.
    var cutOff: Int64?
  }

  let configuration: MuseConfiguration
  var session: Session?
  /// Sessions started so far; the latest one's generation.
  var generation = 0
  var preset: MusePreset
  /// Whether the headband is on (it switches off when its battery empties).
  var isPoweredOn: Bool
  /// The centrals connected now, in order (with one, the battery drains).
  var connected: [CentralID] = []
  var battery: DrainingBattery
  var generators: [SyntheticEEG]
  /// Samples the AUX generator has not taken while AUX was neither sent nor recorded.
  var auxSamplesOwed = 0
  /// A scenario's source per channel, in place of the synthetic EEG, and when it was set.
  var channelSources: [MuseChannel: (source: any SignalSource, origin: Duration)] = [:]
  /// Accelerometer (g) then gyroscope (°/s), x, y, z, and when each was set.
  var motion: [any SignalSource]
  var motionOrigins = [Duration](repeating: .zero, count: 6)
  var pulse: any SignalSource
  var conditions = SyntheticEEG.Conditions()
  /// The eyes' last change: when, from what, to what (they take a second).
  var eyesChange: (at: Duration, from: Double, to: Double) = (.zero, 0, 0)
  /// The last EEG packet made per channel, by `MuseChannel.index`: the
  /// next is written over it in place once the tick that sent it and its
  /// receivers have let it go (no allocation per packet), into a copy of
  /// its own if any still holds it.
  var lastEEGPackets = [[UInt8]](repeating: [], count: MuseChannel.allCases.count)
  /// The same for the accelerometer's packets, then the gyroscope's.
  var lastIMUPackets: [[UInt8]] = [[], []]
  /// A tick's list of packets, kept between ticks emptied (its capacity
  /// kept), so that a tick makes none: see ``lendPacketList()``.
  private var packetList: [(CharacteristicAddress, [UInt8])] = []
  /// Ticks sending their packets now (a tick may await each send).
  var sendingTicks = 0
  /// While a catch-up runs: when it gives up, and the ticks stop sending.
  var catchUpLimit: ContinuousClock.Instant?

  init(
    configuration: MuseConfiguration, generators: [SyntheticEEG], motion: [any SignalSource],
    pulse: any SignalSource
  ) {
    self.configuration = configuration
    self.generators = generators
    self.motion = motion
    self.pulse = pulse
    preset = configuration.preset
    battery = DrainingBattery(level: configuration.batteryLevel)
    isPoweredOn = configuration.batteryLevel > 0
  }

  // MARK: - Streams

  /// The streams this headband sends: PPG only on a variant with it, in a preset that has it on.
  var streams: [MuseStream] {
    configuration.variant.hasPPG && preset.ppg ? Self.everyStream : Self.streamsButPPG
  }

  /// The two lists ``streams`` returns, made once (a tick asks for one).
  private static let everyStream = MuseStream.allCases
  private static let streamsButPPG = MuseStream.allCases.filter { $0 != .ppg }

  /// Takes every packet of session `generation` due at `now` (on the
  /// timeline) into `packets`, and returns when the next is due; `nil` when
  /// that session is over.
  mutating func takePacketsDue(
    _ generation: Int, at now: Duration, into packets: inout [(CharacteristicAddress, [UInt8])]
  ) -> Duration? {
    guard var session, session.generation == generation else { return nil }
    let elapsed = min((now - session.start).nanoseconds, session.cutOff ?? .max)
    var next = Int64.max
    for stream in streams {
      let due = stream.packetsDue(afterNanoseconds: elapsed)
      while session.taken[stream.rawValue] < due {
        let k = session.taken[stream.rawValue]
        self.packets(stream, number: k, session: session, at: now, into: &packets)
        session.taken[stream.rawValue] = k + 1
      }
      next = min(next, stream.deadline(ofPacket: session.taken[stream.rawValue]))
    }
    self.session = session
    return session.start + .nanoseconds(next)
  }

  /// The list a tick fills with its packets: the one kept between ticks,
  /// or a new one while another tick has it. Given back with
  /// ``returnPacketList(_:)``.
  mutating func lendPacketList() -> [(CharacteristicAddress, [UInt8])] {
    var list: [(CharacteristicAddress, [UInt8])] = []
    swap(&list, &packetList)
    if list.capacity == 0 { list.reserveCapacity(8) }
    return list
  }

  /// Takes back a tick's list, emptied: its packets are let go, so the
  /// next tick writes over them in place.
  mutating func returnPacketList(_ list: inout [(CharacteristicAddress, [UInt8])]) {
    list.removeAll(keepingCapacity: true)
    if list.capacity > packetList.capacity { swap(&list, &packetList) }
  }

  /// Records that session `generation` sent all it had taken by `taken`;
  /// whether it is over (cut off, and everything before the cut-off taken).
  mutating func finishSending(_ generation: Int, taken: InlineArray<5, Int>) -> Bool {
    guard var current = session, current.generation == generation else { return true }
    for stream in taken.indices { current.sent[stream] = max(current.sent[stream], taken[stream]) }
    session = current
    guard let cutOff = current.cutOff else { return false }
    return streams.allSatisfy { taken[$0.rawValue] >= $0.packetsDue(afterNanoseconds: cutOff) }
  }

  /// Packet `k` of `stream`, its samples taken now, appended to `packets`
  /// (one per EEG channel sent).
  private mutating func packets(
    _ stream: MuseStream, number k: Int, session: Session, at now: Duration,
    into packets: inout [(CharacteristicAddress, [UInt8])]
  ) {
    let index = UInt16(truncatingIfNeeded: k)
    let first = k * Int(stream.perPacket)
    /// Sample `n`'s time (of the whole session, from 0).
    func time(_ n: Int) -> Duration { session.start + .nanoseconds(Int64(n) * 1_000_000_000 / stream.rate) }
    switch stream {
    case .eeg:
      eegPackets(index: index, first: first, time: time, into: &packets)
    case .accelerometer, .gyroscope:
      let base = stream == .accelerometer ? 0 : 3
      // Each axis's source at the sample's time from its own time zero, in seconds.
      let origins = (
        (session.start - motionOrigins[base]).seconds, (session.start - motionOrigins[base + 1]).seconds,
        (session.start - motionOrigins[base + 2]).seconds
      )
      let count = Int(stream.perPacket)
      withUnsafeTemporaryAllocation(of: (x: Int16, y: Int16, z: Int16).self, capacity: count) { samples in
        for sample in 0..<count {
          let since = Double(first + sample) / Double(stream.rate)
          let (x, y, z) = (
            motionValue(base, since + origins.0), motionValue(base + 1, since + origins.1),
            motionValue(base + 2, since + origins.2)
          )
          samples.initializeElement(
            at: sample,
            to: stream == .accelerometer
              ? (MusePacket.accelerationCode(x), MusePacket.accelerationCode(y), MusePacket.accelerationCode(z))
              : (MusePacket.gyroCode(x), MusePacket.gyroCode(y), MusePacket.gyroCode(z)))
        }
        let which = stream == .accelerometer ? 0 : 1
        MusePacket.imu(index: index, samples: samples, into: &lastIMUPackets[which])
        packets.append(
          (stream == .accelerometer ? MuseHeadband.accelerometer : MuseHeadband.gyroscope, lastIMUPackets[which]))
      }
    case .ppg:
      let wave = (first..<(first + Int(stream.perPacket))).map { n in
        pulse.value(at: max(0, (time(n) - session.start).seconds)) ?? 0
      }
      let ambient = repeatElement(UInt32(2_000), count: 6)
      let infrared = wave.lazy.map { UInt32(max(0, 200_000 + 20_000 * $0)) }
      let red = wave.lazy.map { UInt32(max(0, 150_000 + 15_000 * $0)) }
      packets.append((MuseHeadband.ppg[0], MusePacket.ppg(index: index, codes: ambient)))
      packets.append((MuseHeadband.ppg[1], MusePacket.ppg(index: index, codes: infrared)))
      packets.append((MuseHeadband.ppg[2], MusePacket.ppg(index: index, codes: red)))
    case .telemetry:
      settleBattery(at: now)
      let level = batteryLevel(at: now)
      // A Li-ion cell from 3.3 V empty to 4.2 V full.
      packets.append(
        (
          MuseHeadband.telemetry,
          MusePacket.telemetry(
            index: index, batteryPercent: level * 100, fuelGaugeMillivolts: 3300 + 900 * level, temperature: 96)
        ))
    }
  }

  /// The EEG packets of packet index `index`, whose first sample is `first`.
  private mutating func eegPackets(
    index: UInt16, first: Int, time: (Int) -> Duration, into packets: inout [(CharacteristicAddress, [UInt8])]
  ) {
    let perPacket = MusePacket.eegSamplesPerPacket
    var now = conditions
    // Taken out for the loop, so that each sample is not an access through the state.
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
        MusePacket.eeg(
          index: index, codes: UnsafeBufferPointer(rebasing: codes[row..<(row + perPacket)]),
          into: &lastEEGPackets[channel.index])
        packets.append((MuseHeadband.eeg(channel), lastEEGPackets[channel.index]))
      }
    }
    if skipsAux { auxSamplesOwed += perPacket }
  }

  /// Motion `axis`'s value `seconds` after its source was set.
  private mutating func motionValue(_ axis: Int, _ seconds: Double) -> Double {
    motion[axis].value(at: max(0, seconds)) ?? 0
  }

  /// How closed the eyes are at `time`: they move from the last change's
  /// value to its target over a second.
  func eyesClosed(at time: Duration) -> Double {
    let progress = min(1, max(0, (time - eyesChange.at).seconds))
    return eyesChange.from + (eyesChange.to - eyesChange.from) * progress
  }

  // MARK: - Battery

  /// Of a full battery per hour: none while off or alone, a quarter while
  /// connected and idle, all of it while streaming.
  var drainRate: Double {
    guard isPoweredOn, !connected.isEmpty else { return 0 }
    return session != nil ? configuration.batteryDrainPerHour : configuration.batteryDrainPerHour / 4
  }

  /// The level at `now`, 0…1.
  func batteryLevel(at now: Duration) -> Double { battery.level(at: max(now, battery.since), perHour: drainRate) }

  /// Applies the drain up to `now` at the rate of the state it was in. A
  /// time before the last settling (a tick that read the clock before an
  /// actor method settled, on another thread) settles nothing.
  mutating func settleBattery(at now: Duration) {
    battery.settle(at: max(now, battery.since), perHour: drainRate)
  }
}
