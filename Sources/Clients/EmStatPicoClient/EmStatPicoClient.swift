import GATT
import MethodScriptFormat
import Synchronization

/// The BLE side of PalmSens' MethodSCRIPT iOS example (`BLEConnection.swift`)
/// for an EmStat Pico behind a Laird VSP module: scan for the VSP service
/// into a list of devices, connect to the one picked, subscribe to the TX
/// FIFO, write commands and scripts to the RX FIFO in chunks of at most 20
/// bytes (with response, as PalmSens does), and reassemble the notifications
/// into lines (a FIFO) that are parsed into measurement packages.
///
/// ```swift
/// let pico = EmStatPicoClient(link: central)
/// await pico.startScanningForDevices()
/// // … the app lists `scannedDevices`; the user picks one:
/// try await pico.connectToDevice(picked)
/// print(try await pico.sendCommandVersion())
/// for try await event in try await pico.sendMethodScript(methodScript: script) {
///   if case .package(let p) = event { print(p.potential!, p.current!) }
/// }
/// ```
///
/// One command or script at a time: another one while an answer is pending
/// throws `busy`; `abort()` is the exception.
public actor EmStatPicoClient {
  /// PalmSens' `vspServiceUUID`: the service scans filter on.
  public static let vspServiceUUID: BluetoothUUID = "569a1101-b87f-490c-92cb-11ba5ea5167c"
  /// The Laird VSP service (`vspServiceUUID`).
  public static let vspService = vspServiceUUID
  /// Notifications from the module (Laird's TX FIFO).
  public static let txFIFO = CharacteristicAddress(
    service: vspService, characteristic: "569a2000-b87f-490c-92cb-11ba5ea5167c")
  /// Writes to the module (Laird's RX FIFO).
  public static let rxFIFO = CharacteristicAddress(
    service: vspService, characteristic: "569a2001-b87f-490c-92cb-11ba5ea5167c")
  /// The module's CTS (notify, read).
  public static let modemOut = CharacteristicAddress(
    service: vspService, characteristic: "569a2002-b87f-490c-92cb-11ba5ea5167c")
  /// The host's RTS (write).
  public static let modemIn = CharacteristicAddress(
    service: vspService, characteristic: "569a2003-b87f-490c-92cb-11ba5ea5167c")
  /// The most bytes the module takes in one write.
  public static let maximumChunk = 20

  /// The link's state, as the app shows it.
  public enum LinkState: Hashable, Sendable {
    case idle, scanning, connecting
    case connected(PeripheralID)
    case disconnected(DisconnectReason)
  }

  let link: any CentralLink
  let clock: any Clock<Duration>
  /// How script and command bytes are written (PalmSens: with response).
  public let writeType: WriteType
  /// Whether to use the module's flow control (ModemIn/ModemOut) when it has it.
  public let usesFlowControl: Bool

  private var connection: (any CentralConnection)?
  private var reader: Task<Void, Never>?
  private var flowReader: Task<Void, Never>?
  private var stateSinks: [AsyncStream<LinkState>.Continuation] = []
  public private(set) var state: LinkState = .idle
  /// PalmSens' `scannedDevices`: the devices the current (or last) scan
  /// found, in the order found, to pick one from.
  public private(set) var scannedDevices: [DiscoveredPeripheral] = []
  private var scan: Task<Void, Never>?
  private var scannedSinks: [AsyncStream<[DiscoveredPeripheral]>.Continuation] = []
  /// What the module's CTS says (always `true` without flow control).
  public private(set) var clearToSend = true
  /// Bytes written to the RX FIFO, and writes made.
  public private(set) var bytesWritten = 0
  public private(set) var writesMade = 0

  /// The TX FIFO's lines, filled as its notifications arrive.
  private let fifo = LineFIFO()
  private var nextWaiterID = 0
  private var linkFailure: (any Error)? { fifo.failure }
  /// Whether a command or script waits for its answer (cleared by a
  /// script's output as it ends, on the call that delivered its last line).
  private let busy = Atomic(false)

  public init(
    link: any CentralLink, clock: any Clock<Duration> = ContinuousClock(), writeType: WriteType = .withResponse,
    usesFlowControl: Bool = true
  ) {
    self.link = link
    self.clock = clock
    self.writeType = writeType
    self.usesFlowControl = usesFlowControl
  }

  // MARK: Scanning

  /// `startScanningForDevices`: scans for devices advertising the VSP
  /// service (and, if given, a name prefix) until `stopScanningForDevices()`
  /// or `connectToDevice(_:)`. The list starts empty; each device found is
  /// added to `scannedDevices` once. The state is `scanning` meanwhile.
  public func startScanningForDevices(namePrefix: String? = nil) {
    scan?.cancel()
    scannedDevices = []
    set(.scanning)
    let devices = link.scan(filter: ScanFilter(serviceUUIDs: [Self.vspServiceUUID], namePrefix: namePrefix))
    scan = Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
      for await device in devices { await self?.found(device) }
    }
  }

  /// Stops the scan; `scannedDevices` keeps what it found.
  public func stopScanningForDevices() {
    guard let scan else { return }
    scan.cancel()
    self.scan = nil
    if state == .scanning { set(.idle) }
  }

  /// Whether a scan is running.
  public var isScanning: Bool { scan != nil }

  /// `scannedDevices` now and each time a device is added.
  public func scannedDeviceUpdates() -> AsyncStream<[DiscoveredPeripheral]> {
    let (stream, continuation) = AsyncStream<[DiscoveredPeripheral]>.makeStream()
    continuation.yield(scannedDevices)
    scannedSinks.append(continuation)
    return stream
  }

  private func found(_ device: DiscoveredPeripheral) {
    guard scan != nil, !scannedDevices.contains(where: { $0.id == device.id }) else { return }
    scannedDevices.append(device)
    scannedSinks.removeAll { sink in
      if case .terminated = sink.yield(scannedDevices) { return true }
      return false
    }
  }

  // MARK: Connection

  /// `connectToDevice`: stops scanning, connects to `device` (picked from
  /// `scannedDevices`), subscribes to the TX FIFO, and opens the port (with
  /// flow control: subscribe to ModemOut, write ModemIn = 01, read ModemOut).
  /// Throws `notScanned` for a device the scan did not find, as PalmSens'
  /// example connects only to a device in its list.
  public func connectToDevice(_ device: DiscoveredPeripheral, timeout: Duration = .seconds(20)) async throws {
    stopScanningForDevices()
    guard scannedDevices.contains(where: { $0.id == device.id }) else {
      throw EmStatPicoClientError(
        .notScanned, "\(device.name ?? device.id.description) is not in the list of scanned devices")
    }
    set(.connecting)
    let connection = try await link.connect(device.id, timeout: timeout)
    do {
      try await open(connection)
    } catch {
      await connection.disconnect()
      throw error
    }
    set(.connected(device.id))
    Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
      let reason = try? await connection.disconnected()
      await self?.set(.disconnected(reason ?? .other("unknown")))
    }
  }

  /// Scans until the first device advertising the VSP service (and, if
  /// given, a name prefix) is found, within `timeout`, and connects to it
  /// (`startScanningForDevices` then `connectToDevice` with the first found).
  @discardableResult
  public func connect(namePrefix: String? = nil, timeout: Duration) async throws -> DiscoveredPeripheral {
    let updates = scannedDeviceUpdates()
    startScanningForDevices(namePrefix: namePrefix)
    let clock = self.clock
    let first = await withTaskGroup(of: DiscoveredPeripheral?.self) { group in
      group.addTask {
        for await devices in updates { if let first = devices.first { return first } }
        return nil
      }
      group.addTask {
        try? await clock.sleep(for: timeout)
        return nil
      }
      defer { group.cancelAll() }
      return await group.next() ?? nil
    }
    guard let first else {
      stopScanningForDevices()
      throw EmStatPicoClientError(.timeout, "no VSP device found within \(timeout)")
    }
    try await connectToDevice(first, timeout: timeout)
    return first
  }

  private func open(_ connection: any CentralConnection) async throws {
    let services = try await connection.discoverServices()
    guard let vsp = services.first(where: { $0.uuid == Self.vspService }),
      vsp.characteristic(Self.txFIFO.characteristic) != nil, vsp.characteristic(Self.rxFIFO.characteristic) != nil
    else { throw EmStatPicoClientError(.notSupported, "the device has no VSP TX/RX FIFO") }
    fifo.reset()
    finishRequest()
    clearToSend = true
    self.connection = connection
    let data = try await connection.notifications(of: Self.txFIFO)
    reader?.cancel()
    reader = Task(executorPreference: Task.currentExecutorPreference) { [weak self, fifo] in
      do {
        try await data.receiveEach { fifo.receive($0) }
        await self?.linkEnded(EmStatPicoClientError(.notConnected, "disconnected"))
      } catch {
        await self?.linkEnded(error)
      }
    }
    if usesFlowControl, vsp.characteristic(Self.modemOut.characteristic) != nil,
      vsp.characteristic(Self.modemIn.characteristic) != nil
    {
      let cts = try await connection.notifications(of: Self.modemOut)
      flowReader?.cancel()
      flowReader = Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
        do {
          for try await value in cts { await self?.setClearToSend(value.first.map { $0 & 1 != 0 } ?? true) }
        } catch {
          // The TX FIFO's reader reports the link's end.
        }
      }
      try await connection.write([0x01], to: Self.modemIn, type: .withResponse)
      let value = try await connection.read(Self.modemOut)
      clearToSend = value.first.map { $0 & 1 != 0 } ?? true
    }
  }

  private func setClearToSend(_ value: Bool) { clearToSend = value }

  /// The link's states from now on.
  public func states() -> AsyncStream<LinkState> {
    let (stream, continuation) = AsyncStream<LinkState>.makeStream()
    continuation.yield(state)
    stateSinks.append(continuation)
    return stream
  }

  private func set(_ new: LinkState) {
    state = new
    for sink in stateSinks { sink.yield(new) }
  }

  /// `disconnect`: stops a scan and disconnects from the connected device.
  public func disconnect() async {
    stopScanningForDevices()
    reader?.cancel()
    flowReader?.cancel()
    await connection?.disconnect()
    linkEnded(EmStatPicoClientError(.notConnected, "disconnected"))
  }

  // MARK: Commands

  /// `sendCommandVersion`: sends `t` and returns the device version as
  /// PalmSens' example shows it: the answer's first line as sent, e.g.
  /// `testpico#Aug 2 2019 11:06:07` (the lines after it, up to the one
  /// ending in `*`, are read and not shown, as in the example).
  public func sendCommandVersion(timeout: Duration = .seconds(3)) async throws -> String {
    try await request(Self.commandVersion) { client in
      let first = try await client.nextLine(timeout: timeout)
      try Self.check(first)
      guard first.hasPrefix("t") else {
        throw EmStatPicoClientError(.malformedResponse, "unexpected answer to t: '\(first)'")
      }
      var last = first
      while !last.hasSuffix("*") {
        last = try await client.nextLine(timeout: timeout)
        try Self.check(last)
      }
      return first.hasSuffix("*") ? String(first.dropLast()) : first
    }
  }

  /// PalmSens' `commandVersion`.
  public static let commandVersion = "t\n"
  /// PalmSens' `commandAbort`.
  public static let commandAbort = "Z\n"

  /// `i`: the serial number.
  public func serialNumber(timeout: Duration = .seconds(3)) async throws -> String {
    try await singleLine("i", timeout: timeout)
  }

  /// `v`: the MethodSCRIPT version.
  public func methodScriptVersion(timeout: Duration = .seconds(3)) async throws -> String {
    try await singleLine("v", timeout: timeout)
  }

  private func singleLine(_ command: String, timeout: Duration) async throws -> String {
    try await request(command + "\n") { client in
      let line = try await client.nextLine(timeout: timeout)
      try Self.check(line)
      guard line.hasPrefix(command) else {
        throw EmStatPicoClientError(.malformedResponse, "unexpected answer to \(command): '\(line)'")
      }
      return String(line.dropFirst())
    }
  }

  /// Sends a MethodSCRIPT (`e` is added when the text does not start with it;
  /// the empty line that ends it always is) and returns its output as events,
  /// in order. The stream finishes at the empty line that ends the output,
  /// and throws `device` for an error line (e.g. a script the device refuses)
  /// or the link's error when the connection ends.
  ///
  /// - Parameter lineTimeout: fail with `timeout` when no line arrives for
  ///   this long (`nil`: wait as long as the measurement takes).
  public func sendMethodScript(methodScript: String, lineTimeout: Duration? = nil) async throws
    -> AsyncThrowingStream<MeasurementEvent, any Error>
  {
    try await sendMethodScript(methodScript, lineTimeout: lineTimeout)
  }

  /// `sendMethodScript(methodScript:)` without the label.
  public func sendMethodScript(_ script: String, lineTimeout: Duration? = nil) async throws
    -> AsyncThrowingStream<MeasurementEvent, any Error>
  {
    try startRequest()
    do {
      try await sendMessage(Self.scriptText(script, command: "e"))
    } catch {
      finishRequest()
      throw error
    }
    return outputStream(lineTimeout: lineTimeout)
  }

  /// `l`: loads a script into the device's RAM without running it (`e` is
  /// not needed; the empty line that ends it is added). Throws `device` when
  /// the device refuses the script.
  public func loadMethodScript(_ script: String, timeout: Duration = .seconds(5)) async throws {
    try await request(Self.scriptText(script, command: "l")) { client in
      for expected in ["l", ""] {
        let line = try await client.nextLine(timeout: timeout)
        try Self.check(line)
        guard line == expected else {
          throw EmStatPicoClientError(.malformedResponse, "unexpected answer to l: '\(line)'")
        }
      }
    }
  }

  /// `Fmscr`: stores the script in RAM in the device's flash.
  public func storeMethodScriptInFlash(timeout: Duration = .seconds(3)) async throws {
    try await echoed("Fmscr", timeout: timeout)
  }

  /// `Lmscr`: loads the script stored in flash into RAM, as PalmSens'
  /// `load_mscript_from_flash` does.
  public func loadMethodScriptFromFlash(timeout: Duration = .seconds(3)) async throws {
    try await echoed("Lmscr", timeout: timeout)
  }

  /// `r`: runs the script in RAM; its output as `sendMethodScript`'s.
  public func runLoadedMethodScript(lineTimeout: Duration? = nil) async throws
    -> AsyncThrowingStream<MeasurementEvent, any Error>
  {
    try startRequest()
    do {
      try await sendMessage("r\n")
    } catch {
      finishRequest()
      throw error
    }
    return outputStream(lineTimeout: lineTimeout, accepted: "r")
  }

  /// PalmSens' `run_mscript_from_flash`: `Lmscr`, then `r`.
  public func runMethodScriptFromFlash(lineTimeout: Duration? = nil) async throws
    -> AsyncThrowingStream<MeasurementEvent, any Error>
  {
    try await loadMethodScriptFromFlash()
    return try await runLoadedMethodScript(lineTimeout: lineTimeout)
  }

  /// A command the device answers with its first letter.
  private func echoed(_ command: String, timeout: Duration) async throws {
    try await request(command + "\n") { client in
      let line = try await client.nextLine(timeout: timeout)
      try Self.check(line)
      guard line == String(command.prefix(1)) else {
        throw EmStatPicoClientError(.malformedResponse, "unexpected answer to \(command): '\(line)'")
      }
    }
  }

  /// The script's lines after `command` (a leading `e` line is dropped), then the empty line.
  private static func scriptText(_ script: String, command: String) -> String {
    var body = script.split(separator: "\n", omittingEmptySubsequences: false).map {
      $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
    }
    while body.last?.allSatisfy({ $0 == " " || $0 == "\t" }) == true { body.removeLast() }
    if body.first == "e" { body.removeFirst() }
    body.insert(command, at: 0)
    return body.joined(separator: "\n") + "\n\n"
  }

  /// The events of a running script's output, up to its empty line: the
  /// line FIFO hands each line to them on the call that completed it.
  private func outputStream(lineTimeout: Duration?, accepted: String = "e") -> AsyncThrowingStream<
    MeasurementEvent, any Error
  > {
    let (stream, continuation) = AsyncThrowingStream<MeasurementEvent, any Error>.makeStream()
    let output = ScriptOutput(
      accepted: accepted, events: continuation, timed: lineTimeout.map { _ in Stopwatch(clock) },
      ended: { [self] in busy.store(false, ordering: .releasing) })
    let fifo = self.fifo
    if let lineTimeout {
      output.watch(lineTimeout, clock: clock) { error in fifo.expire(output, with: error) }
    }
    fifo.divert(to: output)
    return stream
  }

  /// Sends `Z`: the running script stops at its next point; its stream then
  /// reports `abortAcknowledged`, the loop's end, and finishes.
  public func abort() async throws {
    try await sendMessage(Self.commandAbort)
  }

  /// `sendMessage`: writes text to the device (`sendData`).
  public func sendMessage(_ message: String) async throws {
    try await sendData(Array(message.utf8))
  }

  /// `sendBytes`: writes bytes to the device (`sendData`).
  public func sendBytes(_ bytes: [UInt8]) async throws {
    try await sendData(bytes)
  }

  /// `sendData`: writes to the RX FIFO in chunks of at most 20 bytes (fewer
  /// when the ATT MTU is smaller), waiting for CTS when the module uses flow control.
  private func sendData(_ bytes: [UInt8]) async throws {
    guard let connection else { throw EmStatPicoClientError(.notConnected, "connect to an EmStat Pico first") }
    let chunk = max(1, min(Self.maximumChunk, await connection.mtu - 3))
    var start = 0
    while start < bytes.count {
      try await waitForClearToSend()
      let end = min(start + chunk, bytes.count)
      try await connection.write(Array(bytes[start..<end]), to: Self.rxFIFO, type: writeType)
      bytesWritten += end - start
      writesMade += 1
      start = end
    }
  }

  private func waitForClearToSend() async throws {
    var waited = Duration.zero
    while !clearToSend {
      if let linkFailure { throw linkFailure }
      guard waited < .seconds(10) else { throw EmStatPicoClientError(.timeout, "the module kept CTS off for 10 s") }
      try await clock.sleep(for: .milliseconds(10))
      waited += .milliseconds(10)
    }
  }

  // MARK: Parsing

  /// PalmSens' `parsePackageLine`: a `P` line into typed values with metadata.
  public static func parsePackageLine(_ line: String) throws(MethodScriptFormatError) -> MethodScriptPackage {
    try MethodScriptPackage(line: line)
  }

  private static func check(_ line: String) throws {
    if let (code, detail) = MethodScriptLine.error(in: line) {
      throw EmStatPicoClientError(.device(code: code, detail: detail), "the device answered '\(line)'")
    }
  }

  // MARK: Line FIFO

  private func startRequest() throws {
    guard connection != nil, linkFailure == nil else {
      throw EmStatPicoClientError(.notConnected, "connect to an EmStat Pico first")
    }
    guard busy.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
      throw EmStatPicoClientError(.busy, "another command is waiting for its answer")
    }
    // Lines nobody asked for (late output of an earlier command) are dropped.
    fifo.dropLines()
  }

  private func finishRequest() { busy.store(false, ordering: .releasing) }

  private func request<T: Sendable>(_ command: String, _ body: (EmStatPicoClient) async throws -> T) async throws -> T {
    try startRequest()
    defer { finishRequest() }
    try await sendMessage(command)
    return try await body(self)
  }

  private func linkEnded(_ error: any Error) {
    connection = nil
    fifo.fail(error)
  }

  /// The next line from the FIFO, waiting for it up to `timeout`.
  func nextLine(timeout: Duration?) async throws -> String {
    if let line = try fifo.next() { return line }
    nextWaiterID += 1
    let id = nextWaiterID
    let clock = self.clock
    let timer: Task<Void, Never>? = timeout.map { limit in
      Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
        guard (try? await clock.sleep(for: limit)) != nil else { return }
        await self?.expire(id)
      }
    }
    return try await withCheckedThrowingContinuation { continuation in
      fifo.wait(LineFIFO.Waiter(id: id, continuation: continuation, timer: timer))
    }
  }

  private func expire(_ id: Int) {
    fifo.expire(id, with: EmStatPicoClientError(.timeout, "no answer from the device in time"))
  }
}
