import Signals

/// How an emulated EmStat Pico is set up: identity, the cell on its
/// electrodes, and its noise. Every field has a default.
public struct EmStatPicoConfiguration: Sendable {
  /// The advertised name (Doppel's choice; the real module's name is set by PalmSens' smartBASIC script).
  public var name: String
  /// The serial number `i` answers (without the leading `i`).
  public var serialNumber: String
  /// The first line `t` answers, without the leading `t`. By default the line
  /// of PalmSens' iOS example document, `testpico#Aug 2 2019 11:06:07`; a
  /// release firmware answers with its device type first, e.g. `espico1304#Oct 22 2021 14:38:26`.
  public var firmwareVersion: String
  /// The text before `*` on the second line of `t`'s answer.
  public var firmwareVersionTrailer: String
  /// What `v` answers, without the leading `v`.
  public var methodScriptVersion: String
  /// The cell scripts measure.
  public var cell: ElectrochemicalCell
  /// Standard deviation of current noise, as a fraction of the current range's full scale.
  public var currentNoise: Double
  /// Relative standard deviation of impedance readings.
  public var impedanceNoise: Double
  /// Seed of all noise: the same seed and script give the same packages.
  public var seed: UInt64
  /// The most bytes one TX FIFO notification carries: 20 as PalmSens
  /// describes the module (the default). Up to 244 lets notifications grow
  /// with the negotiated ATT MTU (ATT_MTU − 3), Doppel's extension for
  /// throughput runs.
  public var notificationPayload: Int
  /// How long output may gather before a notification that is not full goes
  /// out, as the module fills a notification with what its UART buffer holds
  /// by the next connection event (7.5 ms is the shortest BLE connection
  /// interval). Zero, the default, sends whatever is there at once; with
  /// notifications on a socket, which cost the model no round trip, fast
  /// output then goes out in many small notifications.
  public var outputGathering: Duration
  /// Extra current in A added to every reading, by seconds since the script started
  /// (drift, interference, a recorded trace); `nil` for none.
  public var backgroundCurrent: (any SignalSource)?
  /// The cells behind a multiplexer, channel 0 first (`mux_set_channel`
  /// selects one); empty: no multiplexer, `cell` is on the electrodes.
  public var multiplexerCells: [ElectrochemicalCell]

  public init(
    name: String = "EmStat Pico",
    serialNumber: String = "ESPICO0001",
    firmwareVersion: String = "estpico#Aug 2 2019 11:06:07",
    firmwareVersionTrailer: String = "R",
    methodScriptVersion: String = "1.8",
    cell: ElectrochemicalCell = .dummy,
    currentNoise: Double = 1e-4,
    impedanceNoise: Double = 1e-3,
    seed: UInt64 = 1,
    notificationPayload: Int = 20,
    outputGathering: Duration = .zero,
    backgroundCurrent: (any SignalSource)? = nil,
    multiplexerCells: [ElectrochemicalCell] = []
  ) {
    self.name = name
    self.serialNumber = serialNumber
    self.firmwareVersion = firmwareVersion
    self.firmwareVersionTrailer = firmwareVersionTrailer
    self.methodScriptVersion = methodScriptVersion
    self.cell = cell
    self.currentNoise = currentNoise
    self.impedanceNoise = impedanceNoise
    self.seed = seed
    self.notificationPayload = min(244, max(20, notificationPayload))
    self.outputGathering = max(.zero, outputGathering)
    self.backgroundCurrent = backgroundCurrent
    self.multiplexerCells = multiplexerCells
  }
}
