import GATT

/// One streaming session of the wristband, from a start command to a stop
/// command or the last disconnect: what has been sampled, what waits to fill
/// a packet, the packet counters, and the beat detector.
struct StreamingSession {
  /// A group of samples sent in one kind of notification.
  enum Channel: CaseIterable {
    case acceleration, eda, temperature, bvp

    var rate: Int64 {
      switch self {
      case .bvp: 64
      case .acceleration: 32
      case .eda, .temperature: 4
      }
    }

    var samplesPerPacket: Int {
      switch self {
      case .bvp: E4Packet.bvpSamples
      case .acceleration: E4Packet.accelerationSamples
      case .eda: E4Packet.edaSamples
      case .temperature: E4Packet.temperatureSamples
      }
    }

    /// The time of sample `index` from the session's start.
    func time(of index: Int) -> Duration { .nanoseconds(Int64(index) * 1_000_000_000 / rate) }
  }

  /// Distinguishes this session from earlier ones, so a stale streaming task stops.
  let generation: Int
  /// The Unix time the start command gave: the time of every stream's sample 0.
  let startTime: Double
  /// When the session started, on the device timeline.
  let startElapsed: Duration

  /// The next sample index per channel.
  var next = PerChannel(0)
  /// Whether each channel's source ended.
  var ended = PerChannel(false)
  var bvpCodes: [Int16] = []
  var accelerationCodes: [(x: Int8, y: Int8, z: Int8)] = []
  var edaCodes: [UInt32] = []
  var temperatureCodes: [UInt16] = []
  var counters = PerChannel<UInt16>(0)
  var detector: InterbeatIntervalDetector
  var interbeatIntervalsSent = 0

  init(generation: Int, startTime: Double, startElapsed: Duration, configuration: E4Configuration) {
    self.generation = generation
    self.startTime = startTime
    self.startElapsed = startElapsed
    detector = InterbeatIntervalDetector(
      warmUp: configuration.ibiWarmUp, motionThreshold: configuration.motionThreshold)
  }

  func pending(_ channel: Channel) -> Int {
    switch channel {
    case .bvp: bvpCodes.count
    case .acceleration: accelerationCodes.count
    case .eda: edaCodes.count
    case .temperature: temperatureCodes.count
    }
  }

  /// How many samples of `channel` are due `elapsed` after the session's start (sample 0 at once).
  static func due(_ channel: Channel, at elapsed: Duration) -> Int {
    Int(max(0, elapsed.nanoseconds) * channel.rate / 1_000_000_000) + 1
  }

  /// When the next packet fills, from the session's start; `nil` when every channel ended.
  var nextPacketDeadline: Duration? {
    var earliest: Duration?
    for channel in Channel.allCases where !ended[channel] {
      let deadline = channel.time(of: next[channel] + channel.samplesPerPacket - pending(channel) - 1)
      earliest = min(earliest ?? deadline, deadline)
    }
    return earliest
  }

  /// A value for each channel: what the model reads and updates for every
  /// sample, without hashing a dictionary key.
  struct PerChannel<Value> {
    private var acceleration, eda, temperature, bvp: Value

    init(_ initial: Value) {
      (acceleration, eda, temperature, bvp) = (initial, initial, initial, initial)
    }

    subscript(channel: Channel) -> Value {
      get {
        switch channel {
        case .acceleration: acceleration
        case .eda: eda
        case .temperature: temperature
        case .bvp: bvp
        }
      }
      set {
        switch channel {
        case .acceleration: acceleration = newValue
        case .eda: eda = newValue
        case .temperature: temperature = newValue
        case .bvp: bvp = newValue
        }
      }
    }
  }
}
