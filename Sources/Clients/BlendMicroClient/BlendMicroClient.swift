import GATT

/// The Kardia app's BLE side for a Blend Micro ECG board: scan for the UART
/// service, connect, subscribe to UART TX, decode each notification's text as
/// a decimal amplitude.
///
/// ```swift
/// let client = BlendMicroClient(link: central, clock: ContinuousClock())
/// let board = try await client.connect(timeout: .seconds(20))
/// for try await reading in try await client.readings() { … }
/// ```
public actor BlendMicroClient {
  public static let uartService: BluetoothUUID = "713D0000-503E-4C75-BA94-3148F18D941E"
  public static let uartTX = CharacteristicAddress(
    service: uartService, characteristic: "713D0002-503E-4C75-BA94-3148F18D941E")
  public static let uartRX = CharacteristicAddress(
    service: uartService, characteristic: "713D0003-503E-4C75-BA94-3148F18D941E")

  /// The link's state, as the app shows it.
  public enum LinkState: Hashable, Sendable {
    case idle, scanning, connecting
    case connected(PeripheralID)
    case disconnected(DisconnectReason)
  }

  let link: any CentralLink
  let clock: any Clock<Duration>
  private var connection: (any CentralConnection)?
  private var stateSinks: [AsyncStream<LinkState>.Continuation] = []
  public private(set) var state: LinkState = .idle

  public init(link: any CentralLink, clock: any Clock<Duration> = ContinuousClock()) {
    self.link = link
    self.clock = clock
  }

  /// Scans for the first board advertising the UART service (and, if given,
  /// a name prefix) and connects to it.
  @discardableResult
  public func connect(namePrefix: String? = nil, timeout: Duration) async throws -> DiscoveredPeripheral {
    set(.scanning)
    let filter = ScanFilter(serviceUUIDs: [Self.uartService], namePrefix: namePrefix)
    let found = try await link.firstPeripheral(matching: filter, within: timeout, clock: clock, what: "Blend Micro")
    set(.connecting)
    let connection = try await link.connect(found.id, timeout: timeout)
    self.connection = connection
    set(.connected(found.id))
    Task(executorPreference: Task.currentExecutorPreference) { [weak self] in
      let reason = try? await connection.disconnected()
      await self?.set(.disconnected(reason ?? .other("unknown")))
    }
    return found
  }

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

  /// Subscribes to UART TX and decodes every notification, in order. The
  /// sequence ends when the board disconnects (with an error) or the client does.
  public func readings() async throws -> BlendMicroReadings {
    guard let connection else { throw GATTError(.notConnected, "connect to a Blend Micro first") }
    let values = try await connection.notifications(of: Self.uartTX)
    return BlendMicroReadings(notifications: values, elapsed: Stopwatch(clock))
  }

  /// Subscribes to UART TX and hands each notification, decoded, to `body`
  /// as it arrives, in order, timed from the subscription; returns when the
  /// client disconnects, throws when the board is lost. The callback form of
  /// ``readings()``, as an app's delegate gets its values: `body` runs on
  /// the link's own thread or task, with no wake per reading, so it must be
  /// short and thread-safe. A board sending 100 samples a second for a day
  /// makes 8.6 million calls.
  public func receiveReadings(_ body: @escaping @Sendable (BlendMicroReading) -> Void) async throws {
    guard let connection else { throw GATTError(.notConnected, "connect to a Blend Micro first") }
    let values = try await connection.notifications(of: Self.uartTX)
    let elapsed = Stopwatch(clock)
    try await values.receiveEach { bytes in body(Self.decode(bytes, at: elapsed())) }
  }

  /// One notification: UTF-8 text of a decimal number, surrounding white
  /// space allowed (the firmware may end a line).
  public static func decode(_ bytes: [UInt8], at time: Duration) -> BlendMicroReading {
    // Trimmed as bytes: these ASCII bytes are never part of a longer UTF-8 sequence.
    let isPadding = { (byte: UInt8) in byte == 0x20 || byte == 0x0D || byte == 0x0A || byte == 0x09 || byte == 0 }
    let start = bytes.firstIndex { !isPadding($0) } ?? bytes.endIndex
    let end = bytes.lastIndex { !isPadding($0) }.map { $0 + 1 } ?? start
    let number = bytes[start..<max(start, end)]
    // Invalid UTF-8 decodes to U+FFFD, which no number contains.
    guard let value = shortDecimal(number) ?? Double(String(decoding: number, as: UTF8.self)), value.isFinite else {
      return .malformed(bytes: bytes, time: time)
    }
    return .sample(ECGSample(time: time, amplitude: value, text: String(decoding: bytes, as: UTF8.self)))
  }

  /// The value of a plain decimal such as `-0.2332` (a sign, digits, at
  /// most one point, at most 15 digits in all), without making a string:
  /// the digits as an integer and a power of ten are both exact as doubles,
  /// so one division gives the correctly rounded value, as `Double(_:)` does.
  /// `nil` for anything else (exponents, more digits), which `Double(_:)` reads.
  static func shortDecimal(_ text: ArraySlice<UInt8>) -> Double? {
    var index = text.startIndex
    let negative = index < text.endIndex && text[index] == UInt8(ascii: "-")
    if negative || (index < text.endIndex && text[index] == UInt8(ascii: "+")) { index += 1 }
    var digits: Int64 = 0
    var count = 0
    var decimals: Int?
    while index < text.endIndex {
      let byte = text[index]
      if byte == UInt8(ascii: "."), decimals == nil {
        decimals = 0
      } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
        count += 1
        guard count <= 15 else { return nil }
        digits = digits * 10 + Int64(byte - UInt8(ascii: "0"))
        decimals = decimals.map { $0 + 1 }
      } else {
        return nil
      }
      index += 1
    }
    guard count > 0 else { return nil }
    let magnitude = Double(digits) / powersOfTen[decimals ?? 0]
    return negative ? -magnitude : magnitude
  }

  private static let powersOfTen: [Double] = [
    1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
  ]

  /// Writes a command to UART RX (at most 20 bytes, without response, as the board takes it).
  public func send(_ bytes: [UInt8]) async throws {
    guard let connection else { throw GATTError(.notConnected, "connect to a Blend Micro first") }
    try await connection.write(bytes, to: Self.uartRX, type: .withoutResponse)
  }

  /// Disconnects.
  public func disconnect() async {
    await connection?.disconnect()
  }
}
