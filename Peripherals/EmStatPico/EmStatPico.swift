import GATT
import MethodScriptFormat
import Signals

/// A PalmSens EmStat Pico potentiostat behind a Laird BT900 "Virtual Serial
/// Port" (VSP) service: the host writes text commands and MethodSCRIPTs to the
/// RX FIFO in chunks of at most 20 bytes and receives the Pico's text output
/// as notifications of the TX FIFO, 20 bytes at a time.
///
/// Commands are lines: `t` (firmware version), `v` (MethodSCRIPT version),
/// `i` (serial number), `e` + script lines + an empty line (run a script),
/// `Z` (abort it). A script is parsed whole before it runs; errors are
/// answered with `!XXXX` lines (see `MethodScriptError`). The script measures
/// a simulated `ElectrochemicalCell` in the device's clock time.
public actor EmStatPico: PeripheralModel {
  public static let vspService: BluetoothUUID = "569a1101-b87f-490c-92cb-11ba5ea5167c"
  /// Module → host data (notify). Laird calls it TX FIFO.
  public static let txFIFO = CharacteristicAddress(
    service: vspService, characteristic: "569a2000-b87f-490c-92cb-11ba5ea5167c")
  /// Host → module data (write). Laird calls it RX FIFO.
  public static let rxFIFO = CharacteristicAddress(
    service: vspService, characteristic: "569a2001-b87f-490c-92cb-11ba5ea5167c")
  /// Module → host flow control (CTS): `01` room in the module's buffer, `00` full (notify, read).
  public static let modemOut = CharacteristicAddress(
    service: vspService, characteristic: "569a2002-b87f-490c-92cb-11ba5ea5167c")
  /// Host → module flow control (RTS): `01` ready to receive, `00` pause (write).
  public static let modemIn = CharacteristicAddress(
    service: vspService, characteristic: "569a2003-b87f-490c-92cb-11ba5ea5167c")
  /// The most bytes in one write or notification.
  public static let maximumPayload = 20
  /// The longest command line the firmware takes.
  public static let maximumLineLength = 128

  public nonisolated let profile: GATTProfile
  public nonisolated let advertisement: AdvertisementData
  /// The configuration the device started with (see the `set…` methods for changes).
  public nonisolated let initialConfiguration: EmStatPicoConfiguration

  private var configuration: EmStatPicoConfiguration
  private var host: (any PeripheralHost)?

  private enum Mode {
    case idle
    /// Lines after `e` (run when they end) or `l` (only loaded).
    case receivingScript([String], run: Bool)
    case running
  }

  /// The GPIO pins: a scenario drives inputs (`drive`) and reads outputs (`outputs`).
  public nonisolated var gpio: GPIOPins { peripherals.pins }
  /// The real-time clock (`rtc_set`, `rtc_get`).
  public nonisolated var realTimeClock: RealTimeClock { peripherals.clock }
  private nonisolated let peripherals = PicoPeripherals()

  /// The script in RAM (`e` and `l` load it, `Lmscr` loads it from flash, `r` runs it).
  private var loadedScript: (lines: [String], script: MethodScript)?
  /// The script stored in flash (`Fmscr`), kept while the model exists.
  public private(set) var flashScript: [String]?

  private var mode = Mode.idle
  private var received: [UInt8] = []
  private var runner: Task<Void, Never>?
  private var abortSignal = AbortSignal()
  private var outgoing: [UInt8] = []
  /// The centrals connected, as the host's events said.
  private var centrals: Set<CentralID> = []
  private var sending = false
  private var noiseSeed: UInt64
  /// The ATT MTU of the last exchange (23 until one happens).
  private var mtu = 23

  /// Whether the host has set ModemIn to ready (it is until the host writes `00`).
  public private(set) var hostReady = true
  /// What ModemOut (CTS) says: whether the module takes more data.
  public private(set) var clearToSend = true
  /// Whether the device answers at all (see `stopResponding()`).
  public private(set) var isResponding = true
  /// Notifications sent on the TX FIFO.
  public private(set) var notificationsSent = 0
  /// Notifications lost on purpose (`dropNextNotifications(_:)`) or for want of a subscriber.
  public private(set) var notificationsDropped = 0
  /// Scripts that were parsed and started.
  public private(set) var scriptsStarted = 0
  /// Command lines received (scripts' lines excluded), in order.
  public private(set) var commands: [String] = []
  /// The last error the device reported.
  public private(set) var lastError: MethodScriptError?
  private var dropCount = 0

  /// Whether a script is running.
  public var isRunningScript: Bool {
    if case .running = mode { true } else { false }
  }

  public init(configuration: EmStatPicoConfiguration = EmStatPicoConfiguration()) {
    self.initialConfiguration = configuration
    self.configuration = configuration
    self.noiseSeed = configuration.seed
    self.advertisement = AdvertisementData(localName: configuration.name, serviceUUIDs: [Self.vspService])
    // The definitions are fixed and valid; a failure here is a programming error.
    self.profile = try! GATTProfile([
      ServiceDefinition(
        Self.vspService, name: "Laird Virtual Serial Port",
        characteristics: [
          CharacteristicDefinition(
            Self.txFIFO.characteristic, name: "TX FIFO", properties: [.notify],
            maximumLength: configuration.notificationPayload),
          CharacteristicDefinition(
            Self.rxFIFO.characteristic, name: "RX FIFO", properties: [.write, .writeWithoutResponse],
            maximumLength: Self.maximumPayload),
          CharacteristicDefinition(
            Self.modemOut.characteristic, name: "ModemOut", properties: [.read, .notify], initialValue: [0x01],
            maximumLength: 1),
          CharacteristicDefinition(
            Self.modemIn.characteristic, name: "ModemIn", properties: [.write, .writeWithoutResponse],
            initialValue: [0x01], maximumLength: 1),
        ])
    ])
  }

  // MARK: PeripheralModel

  public func start(host: any PeripheralHost) async {
    self.host = host
    peripherals.clock.attach(uptime: Self.uptime(of: host.clock))
  }

  private static func uptime<C: Clock<Duration>>(of clock: C) -> @Sendable () -> Double {
    let origin = clock.now
    return { origin.duration(to: clock.now).seconds }
  }

  /// A press of the WAKE pin: wakes a script from `hibernate` when the pin is one of its sources.
  public func pressWakePin() {
    peripherals.wake.fire(WakeEvents.wakePin)
  }

  public func stop() async {
    runner?.cancel()
    runner = nil
    host = nil
  }

  public func read(characteristic: CharacteristicAddress, offset: Int, central: CentralID) async throws(ATTError)
    -> [UInt8]
  {
    let value: [UInt8]
    switch characteristic {
    case Self.modemOut: value = [clearToSend ? 0x01 : 0x00]
    case Self.modemIn: value = [hostReady ? 0x01 : 0x00]
    default: throw .readNotPermitted
    }
    guard offset <= value.count else { throw .invalidOffset }
    return Array(value[offset...])
  }

  public func write(characteristic: CharacteristicAddress, value: [UInt8], type: WriteType, central: CentralID)
    async throws(ATTError)
  {
    switch characteristic {
    case Self.rxFIFO:
      guard value.count <= Self.maximumPayload else { throw .invalidAttributeValueLength }
      // A hung device, or data sent while CTS says the buffer is full, is lost.
      guard isResponding, clearToSend else { return }
      receive(value)
    case Self.modemIn:
      guard value.count == 1 else { throw .invalidAttributeValueLength }
      hostReady = value[0] & 0x01 != 0
      if hostReady { startSending() }
    default:
      throw .writeNotPermitted
    }
  }

  public func mtuChanged(_ mtu: Int, central: CentralID) async { self.mtu = mtu }

  public func centralConnected(_ central: CentralID) async { centrals.insert(central) }

  /// When the last central leaves, the module's buffers are flushed and a
  /// running script is stopped without output (Doppel's choice: what the real
  /// bridge does is not public; a script left running would make the Pico
  /// ignore the next host's script until it ends). The last by the host's
  /// events, in their order: by the time this one is handled, the host may
  /// already list the central that connected again after it.
  public func centralDisconnected(_ central: CentralID, reason: DisconnectReason) async {
    centrals.remove(central)
    guard host != nil, centrals.isEmpty else { return }
    mtu = 23
    runner?.cancel()
    runner = nil
    abortSignal = AbortSignal()
    mode = .idle
    received = []
    outgoing = []
  }

  public func subscriptionChanged(characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool) async {
    if characteristic == Self.txFIFO, subscribed { startSending() }
  }

  // MARK: Scenario controls

  /// The cell the next script measures.
  public func setCell(_ cell: ElectrochemicalCell) { configuration.cell = cell }

  /// Puts `cells` behind a multiplexer, channel 0 first (empty: none); the next script sees them.
  public func setMultiplexer(_ cells: [ElectrochemicalCell]) { configuration.multiplexerCells = cells }

  /// Extra current (A) added to readings of the next script, by seconds since it started.
  public func setBackgroundCurrent(_ source: (any SignalSource)?) { configuration.backgroundCurrent = source }

  /// Noise of the next script: current (fraction of full scale), impedance (relative), and seed.
  public func setNoise(current: Double, impedance: Double, seed: UInt64) {
    configuration.currentNoise = current
    configuration.impedanceNoise = impedance
    noiseSeed = seed
  }

  /// The serial number `i` answers from now on.
  public func setSerialNumber(_ serial: String) { configuration.serialNumber = serial }

  /// The firmware version `t` answers from now on (without the leading `t`).
  public func setFirmwareVersion(_ version: String) { configuration.firmwareVersion = version }

  /// Aborts the running script as a host's `Z` does: `Z`, the loop's end,
  /// `on_finished:`, the empty line. Does nothing when none runs.
  public func abortScript() {
    guard isRunningScript else { return }
    emit("Z")
    abortSignal.set()
  }

  /// Ends the running script with an error line (a device fault mid-run),
  /// without the empty line; the cell is switched off.
  public func failScript(_ code: MethodScriptError.Code = .unspecified) {
    guard isRunningScript else { return }
    runner?.cancel()
    runner = nil
    let error = MethodScriptError(code, line: 1, column: 1)
    lastError = error
    emit("!" + error.text)
    mode = .idle
  }

  /// The firmware hangs: the running script stops without output, commands
  /// are ignored and nothing more is sent, until `resumeResponding()`.
  public func stopResponding() {
    isResponding = false
    runner?.cancel()
    runner = nil
    mode = .idle
    received = []
    outgoing = []
  }

  /// The device answers again, as after a reset: idle, buffers empty.
  public func resumeResponding() {
    isResponding = true
    mode = .idle
    received = []
  }

  /// Loses the next `count` TX notifications (they are never sent).
  public func dropNextNotifications(_ count: Int) { dropCount += max(0, count) }

  /// Sets ModemOut (CTS) and notifies subscribers: `false` tells the host the
  /// module's buffer is full; data written meanwhile is lost.
  public func setClearToSend(_ ready: Bool) async {
    clearToSend = ready
    try? await host?.notify([ready ? 0x01 : 0x00], characteristic: Self.modemOut)
  }

  /// Drops every connection from the device side.
  public func disconnectCentrals() async {
    guard let host else { return }
    for central in await host.connectedCentrals { await host.disconnect(central) }
  }

  // MARK: Commands

  private func receive(_ bytes: [UInt8]) {
    for byte in bytes {
      if byte == UInt8(ascii: "\n") {
        var line = received
        received = []
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        handle(line: String(decoding: line, as: UTF8.self))
      } else if received.count <= Self.maximumLineLength * 4 {
        received.append(byte)
      }
    }
  }

  private func handle(line: String) {
    switch mode {
    case .receivingScript(var lines, let run):
      if line.isEmpty {
        mode = .idle
        if run {
          start(lines)
        } else if load(lines) {
          emit("")
        }
      } else {
        // Beyond what the parser accepts, lines only need counting.
        if lines.count <= MethodScriptParser().maximumLines { lines.append(line) } else { lines.append("") }
        mode = .receivingScript(lines, run: run)
      }
    case .running:
      // Any line wakes a hibernating script whose sources include communication.
      peripherals.wake.fire(WakeEvents.communication)
      // While a script runs the firmware listens only for an abort.
      if line == "Z" {
        host?.firmwareEvent("abort", detail: "Z while a script runs")
        emit("Z")
        abortSignal.set()
      }
    case .idle:
      guard let command = line.first else { return }
      commands.append(line)
      host?.firmwareEvent("command", detail: line)
      if line.count > Self.maximumLineLength {
        fail(command, .lineTooLong)
        return
      }
      switch command {
      case "t":
        emit("t" + configuration.firmwareVersion)
        emit(configuration.firmwareVersionTrailer + "*")
      case "v":
        emit("v" + configuration.methodScriptVersion)
      case "i":
        emit("i" + configuration.serialNumber)
      case "e", "l":
        emit(String(command))
        mode = .receivingScript([], run: command == "e")
      case "r":
        guard line == "r", let loaded = loadedScript else {
          fail("r", line == "r" ? .invalidState : .unknownCommand)
          return
        }
        emit("r")
        run(loaded.script, lines: loaded.lines.count)
      case "L", "F":
        // `Lmscr` loads the script in flash into RAM; `Fmscr` stores the script in RAM in flash.
        guard line.dropFirst() == "mscr" else {
          fail(command, .unknownCommand)
          return
        }
        if command == "F" {
          guard let loaded = loadedScript else { return fail("F", .invalidState) }
          flashScript = loaded.lines
        } else {
          guard let stored = flashScript else { return fail("L", .invalidState) }
          guard load(stored) else { return }
        }
        emit(String(command))
      case "Z":
        fail("Z", .invalidState)
      default:
        fail(command, .unknownCommand)
      }
    }
  }

  private func fail(_ command: Character, _ code: MethodScriptError.Code) {
    let error = MethodScriptError(code)
    lastError = error
    emit(String(command) + "!" + error.text)
  }

  /// Parses `lines` into RAM; on an error, answers its line and keeps the old script.
  private func load(_ lines: [String]) -> Bool {
    switch MethodScriptParser().parse(lines) {
    case .failure(let error):
      lastError = error
      host?.firmwareEvent("script-refused", detail: "!" + error.text)
      emit("!" + error.text)
      return false
    case .success(let script):
      loadedScript = (lines, script)
      return true
    }
  }

  private func start(_ lines: [String]) {
    guard load(lines), let loaded = loadedScript else { return }
    run(loaded.script, lines: lines.count)
  }

  private func run(_ script: MethodScript, lines: Int) {
    guard let host else { return }
    host.firmwareEvent("script", detail: "\(lines) lines accepted")
    mode = .running
    scriptsStarted += 1
    let abort = AbortSignal()
    abortSignal = abort
    let potentiostat = Potentiostat(
      noiseFraction: configuration.currentNoise, impedanceNoise: configuration.impedanceNoise,
      seed: noiseSeed &+ UInt64(scriptsStarted))
    let cell = configuration.cell
    let background = configuration.backgroundCurrent
    let multiplexerCells = configuration.multiplexerCells
    var peripherals = self.peripherals
    peripherals.event = { [weak self] name, detail in await self?.firmwareEvent(name, detail: detail) }
    runner = Task(executorPreference: Task.currentExecutorPreference) {
      var interpreter = MethodScriptInterpreter(
        cell: cell, potentiostat: potentiostat, background: background, abort: abort,
        multiplexerCells: multiplexerCells, peripherals: peripherals,
        output: { [weak self] line in await self?.emit(line, from: abort) })
      await interpreter.run(script, clock: host.clock)
      await self.scriptEnded(abort)
    }
  }

  private func firmwareEvent(_ name: String, detail: String) {
    host?.firmwareEvent(name, detail: detail)
  }

  private func scriptEnded(_ abort: AbortSignal) {
    // A newer script (after a reset) owns the state otherwise.
    guard abort === abortSignal, isRunningScript else { return }
    mode = .idle
    runner = nil
    // The instant its last line was written to the TX FIFO: a scenario can end
    // a measurement's run this long after it (`after: script-done`).
    host?.firmwareEvent("script-done", detail: abort.isSet ? "aborted" : "completed")
  }

  // MARK: Output

  /// A line of a script's output, dropped once that script has been stopped.
  private func emit(_ line: String, from script: AbortSignal) {
    guard script === abortSignal, isRunningScript else { return }
    emit(line)
  }

  /// Queues a line of the Pico's output for the TX FIFO.
  private func emit(_ line: String) {
    guard isResponding else { return }
    outgoing.append(contentsOf: line.utf8)
    outgoing.append(UInt8(ascii: "\n"))
    startSending()
  }

  private func startSending() {
    guard !sending, hostReady, !outgoing.isEmpty, let host else { return }
    // Without gathering, the output goes out within this call when the host
    // can send without suspending (the loopback's): no pump task per line.
    if configuration.outputGathering == .zero, sendAtOnce(on: host) { return }
    sending = true
    Task(executorPreference: Task.currentExecutorPreference) { await self.pump() }
  }

  /// Sends the queued output without suspending while the host can: `true`
  /// once all of it went, `false` when the host wants the rest awaited.
  private func sendAtOnce(on host: any PeripheralHost) -> Bool {
    while let chunk = nextChunk() {
      do {
        // Nothing runs between here and the removal: the output is as it was.
        guard try host.notifyAtOnce(chunk, characteristic: Self.txFIFO) else { return false }
        outgoing.removeFirst(chunk.count)
        notificationsSent += 1
      } catch {
        outgoing.removeFirst(chunk.count)
        lost(error)
      }
    }
    return true
  }

  /// Sends the output stream in notifications of at most 20 bytes (or the
  /// configured payload, within ATT_MTU − 3), in order,
  /// while the host is ready. Output with nobody subscribed is lost. A
  /// notification that would not be full waits `outputGathering` once for
  /// more output, so that output faster than the link fills notifications;
  /// the pump ends once a wait brought nothing. (Waiting again after each
  /// notification, rather than ending, also lets a virtual clock move on at
  /// once instead of waiting for this task to sleep.)
  private func pump() async {
    defer { sending = false }
    let gathering = configuration.outputGathering
    var waited = false
    while let host, hostReady, isResponding {
      if outgoing.count < chunkSize, !waited, gathering != .zero {
        waited = true
        try? await host.clock.sleep(for: gathering)
        continue
      }
      waited = false
      guard let chunk = nextChunk() else { break }
      // Taken before the wait: a reset may empty the output meanwhile.
      outgoing.removeFirst(chunk.count)
      do {
        try await host.notify(chunk, characteristic: Self.txFIFO)
        notificationsSent += 1
      } catch {
        lost(error)
      }
    }
  }

  /// The most output bytes in one notification.
  private var chunkSize: Int { max(1, min(configuration.notificationPayload, mtu - 3)) }

  /// The next notification's bytes, at the front of the output (left
  /// there), or `nil` when none is left; one the scenario drops
  /// (`dropNextNotifications`) is taken off and counted here.
  private func nextChunk() -> [UInt8]? {
    while !outgoing.isEmpty {
      let chunk = Array(outgoing.prefix(chunkSize))
      guard dropCount > 0 else { return chunk }
      outgoing.removeFirst(chunk.count)
      dropCount -= 1
      notificationsDropped += 1
    }
    return nil
  }

  /// A notification that could not go is lost, and with nobody to take it
  /// all the output queued behind it.
  private func lost(_ error: GATTError) {
    notificationsDropped += 1
    if error.code == .noSubscribers || error.code == .notConnected {
      outgoing = []
    }
  }
}
