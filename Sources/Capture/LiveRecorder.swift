import GATT
import Synchronization

/// Records a live peripheral through any `CentralLink` (BlueZ, the
/// loopback) into the files `doppel import` writes, so that the `generic`
/// model replays it: finds it by name or address, connects, reads its
/// database and every readable value and descriptor, subscribes to every
/// characteristic that notifies or indicates, and records each value with
/// its time until the duration is over, the link drops (a timeline fault
/// at that moment), or the recording task is cancelled (what was recorded
/// is kept).
public struct LiveRecorder: Sendable {
  /// Which peripheral to record.
  public enum Target: Sendable, Hashable, CustomStringConvertible {
    /// The first whose advertised name starts with this.
    case name(String)
    /// The one at this address (either case).
    case address(String)

    public var description: String {
      switch self {
      case .name(let prefix): "named \(prefix)…"
      case .address(let address): "at \(address)"
      }
    }

    func matches(_ peripheral: DiscoveredPeripheral) -> Bool {
      switch self {
      case .name(let prefix): peripheral.name?.hasPrefix(prefix) == true
      case .address(let address): peripheral.id.rawValue.caseInsensitiveCompare(address) == .orderedSame
      }
    }
  }

  public let link: any CentralLink
  public let clock: any Clock<Duration>
  /// Where the central is (`hci1`), for messages and the scenario's comment.
  public let place: String
  /// How long to scan for the peripheral.
  public var scanLimit: Duration
  /// How long to wait for the connection.
  public var connectLimit: Duration

  public init(
    link: any CentralLink, clock: any Clock<Duration>, place: String, scanLimit: Duration = .seconds(20),
    connectLimit: Duration = .seconds(30)
  ) {
    self.link = link
    self.clock = clock
    self.place = place
    self.scanLimit = scanLimit
    self.connectLimit = connectLimit
  }

  /// Records `target` for `duration` from its first subscription.
  ///
  /// - Parameters:
  ///   - source: added to the scenario's comment (when and by whom).
  ///   - progress: told each step, one line each.
  /// - Throws: `notFound` when no peripheral matches within `scanLimit`,
  ///   `connectFailed` (with the transport's error, BlueZ's D-Bus name
  ///   included), `linkFailed` when the link fails before the recording
  ///   begins, `interrupted` when cancelled before then.
  public func record(
    _ target: Target, for duration: Duration, source: String? = nil,
    progress: @escaping @Sendable (String) -> Void = { _ in }
  ) async throws(RecordingError) -> LiveRecording {
    do {
      return try await recording(target, for: duration, source: source, progress: progress)
    } catch let error as RecordingError {
      throw error
    } catch is CancellationError {
      throw RecordingError(.interrupted, "interrupted before the recording of a device \(target) began")
    } catch {
      throw RecordingError(.linkFailed, "\(error)")
    }
  }

  private func recording(
    _ target: Target, for duration: Duration, source: String?, progress: @escaping @Sendable (String) -> Void
  ) async throws -> LiveRecording {
    let log = Log(clock)
    progress("scanning on \(place) for a device \(target)")
    let peripheral = try await find(target)
    let who = "\(peripheral.id)" + (peripheral.name.map { " \"\($0)\"" } ?? "")
    progress("found \(who), RSSI \(peripheral.rssi) dBm; connecting")
    let connection: any CentralConnection
    do {
      connection = try await link.connect(peripheral.id, timeout: connectLimit)
    } catch {
      try Task.checkCancellation()
      throw RecordingError(.connectFailed, "cannot connect to \(who) from \(place): \(error.message)")
    }
    let connectedAt = log.now()
    var notes: [String] = []
    var profile = ImportedProfile()
    let discovered: [DiscoveredService]
    let keys: [[String]?]
    do {
      discovered = try await connection.discoverServices()
      let found = try await read(discovered, on: connection, notes: &notes)
      keys = profile.declare(found, notes: &notes)
    } catch {
      await Self.disconnect(connection)
      try Task.checkCancellation()
      throw RecordingError(.linkFailed, "the link to \(who) failed while reading its database: \(error)")
    }
    let declared = profile.services.reduce(0) { $0 + $1.entries.count }
    progress(
      "connected; declaring \(profile.services.count) of its \(discovered.count) services,"
        + " \(declared) characteristic\(declared == 1 ? "" : "s")")

    let (ending, recorded, subscribed) = await withTaskGroup(of: Void.self) {
      consumers -> (LiveRecording.Ending, Duration, Int) in
      var subscribed = 0
      subscribing: for (service, serviceKeys) in zip(discovered, keys) {
        guard let serviceKeys else { continue }
        for (characteristic, key) in zip(service.characteristics, serviceKeys)
        where !characteristic.properties.isDisjoint(with: [.notify, .indicate]) {
          let indicates = !characteristic.properties.contains(.notify)
          let stream: NotificationStream
          do {
            stream = try await connection.notifications(of: characteristic.address)
          } catch {
            if Self.isGone(error) { break subscribing }
            notes.append("could not subscribe to \(key) (\(characteristic.address)): \(error)")
            continue
          }
          log.append(.subscription(key: key, value: indicates ? 2 : 1))
          subscribed += 1
          consumers.addTask {
            do {
              for try await value in stream {
                log.append(indicates ? .indication(key: key, value: value) : .notification(key: key, value: value))
              }
            } catch {}
          }
        }
      }
      let start = log.now()
      progress("recording \(subscribed) characteristic\(subscribed == 1 ? "" : "s") for \(Self.seconds(duration)) s")
      let ending = await wait(on: connection, for: duration, log: log)
      let recorded = Duration.microseconds((log.endedAt ?? log.now()) - start)
      let linkUp = if case .linkEnded = ending { false } else { true }
      if linkUp { await Self.disconnect(connection) }
      consumers.cancelAll()
      return (ending, recorded, subscribed)
    }
    if subscribed == 0 {
      notes.append("the device has no characteristic that notifies or indicates: the recording is empty")
    }
    var disconnection: (time: Int64, reason: String)?
    if case .linkEnded(let reason) = ending, let at = log.endedAt {
      disconnection = (at, Self.describe(reason))
    }
    let name = peripheral.name ?? peripheral.id.rawValue
    let session = PeripheralSession(
      origin: [
        "Recorded by `doppel record` on \(place)\(source.map { ", \($0)" } ?? ""):",
        "the peripheral \(who) for \(Self.seconds(recorded)) s"
          + (ending == .interrupted ? ", stopped early." : "."),
      ],
      name: "recorded \(name)", description: "\(peripheral.id) recorded on \(place)",
      advertisement: peripheral.advertisement, profile: profile, connectedAt: connectedAt, events: log.events,
      disconnection: disconnection, watchedUntil: log.endedAt, seesWrites: false)
    return LiveRecording(
      peripheral: peripheral, scenario: ImportedScenario(session: session, notes: notes), recorded: recorded,
      ending: ending)
  }

  /// The first peripheral that matches `target`, within `scanLimit`.
  private func find(_ target: Target) async throws -> DiscoveredPeripheral {
    let filter: ScanFilter = if case .name(let prefix) = target { ScanFilter(namePrefix: prefix) } else { .any }
    enum Outcome: Sendable {
      case found(DiscoveredPeripheral)
      case scanEnded
      case timedOut
    }
    let link = link
    let clock = clock
    let limit = scanLimit
    let outcome = try await withThrowingTaskGroup(of: Outcome.self) { group in
      group.addTask {
        for await peripheral in link.scan(filter: filter) where target.matches(peripheral) {
          return .found(peripheral)
        }
        return .scanEnded
      }
      group.addTask {
        try await clock.sleep(for: limit)
        return .timedOut
      }
      defer { group.cancelAll() }
      return try await group.next() ?? .scanEnded
    }
    switch outcome {
    case .found(let peripheral): return peripheral
    case .scanEnded:
      try Task.checkCancellation()
      throw RecordingError(.notFound, "the scan on \(place) ended before a device \(target) showed up")
    case .timedOut:
      throw RecordingError(.notFound, "no device \(target) found on \(place) within \(Self.seconds(limit)) s")
    }
  }

  /// Every service with each characteristic's value and descriptors read
  /// (bluetoothd's own services are not read: they are not declared). A
  /// value or descriptor that cannot be read is noted and left out; a
  /// link that ends throws.
  private func read(_ services: [DiscoveredService], on connection: any CentralConnection, notes: inout [String])
    async throws -> [ImportedProfile.FoundService]
  {
    var found: [ImportedProfile.FoundService] = []
    var position = 0
    for (index, service) in services.enumerated() {
      let declared = !ImportedProfile.stackServices.contains(service.uuid)
      var characteristics: [ImportedProfile.FoundCharacteristic] = []
      for characteristic in service.characteristics {
        position += 1
        var value: [UInt8]?
        var descriptors: [(uuid: BluetoothUUID, value: [UInt8])] = []
        if declared, characteristic.properties.contains(.read) {
          do {
            value = try await connection.read(characteristic.address)
          } catch {
            if Self.isGone(error) { throw error }
            notes.append(
              "\(characteristic.address) could not be read (\(error)): it is declared without a value,"
                + " so reads of it are refused")
          }
        }
        if declared {
          for descriptor in characteristic.descriptors where !ImportedProfile.notDescriptors.contains(descriptor) {
            do {
              descriptors.append(
                (descriptor, try await connection.read(descriptor: descriptor, of: characteristic.address)))
            } catch {
              if Self.isGone(error) { throw error }
              notes.append(
                "descriptor \(descriptor) of \(characteristic.address) could not be read (\(error)):"
                  + " it is left out")
            }
          }
        }
        characteristics.append(
          ImportedProfile.FoundCharacteristic(
            uuid: characteristic.uuid, properties: characteristic.properties, value: value,
            descriptors: descriptors, tag: String(position)))
      }
      found.append(
        ImportedProfile.FoundService(
          uuid: service.uuid, place: "at position \(index + 1)", characteristics: characteristics))
    }
    return found
  }

  /// Whether `error` says the link is gone or the task was cancelled: nothing more can be done on it then.
  private static func isGone(_ error: any Error) -> Bool {
    guard let error = error as? GATTError else { return true }
    switch error.code {
    case .notConnected, .disconnected, .cancelled: return true
    default: return false
    }
  }

  /// Waits until `duration` has passed, the link ends, or the task is cancelled.
  private func wait(on connection: any CentralConnection, for duration: Duration, log: Log) async
    -> LiveRecording.Ending
  {
    let clock = clock
    return await withTaskGroup(of: LiveRecording.Ending.self) { group in
      group.addTask {
        do {
          try await clock.sleep(for: duration)
          log.end()
          return .elapsed
        } catch {
          log.end()
          return .interrupted
        }
      }
      group.addTask {
        do {
          let reason = try await connection.disconnected()
          log.end()
          return .linkEnded(reason)
        } catch {
          log.end()
          return .interrupted
        }
      }
      let first = await group.next() ?? .interrupted
      group.cancelAll()
      return first
    }
  }

  /// Ends the link from a task of its own (on the same executor): a
  /// cancelled task's calls would be cancelled too.
  private static func disconnect(_ connection: any CentralConnection) async {
    await Task(executorPreference: Task.currentExecutorPreference) { await connection.disconnect() }.value
  }

  static func describe(_ reason: DisconnectReason) -> String {
    switch reason {
    case .remote: "the peripheral ended the link"
    case .linkLoss: "link lost"
    case .local: "ended by the central"
    case .other(let text): text
    }
  }

  /// `duration` in seconds, as few decimals as it needs (at most three).
  static func seconds(_ duration: Duration) -> String {
    let milliseconds = duration.nanoseconds / 1_000_000
    let fraction = milliseconds % 1000
    guard fraction != 0 else { return "\(milliseconds / 1000)" }
    var digits = String(fraction)
    digits = String(repeating: "0", count: 3 - digits.count) + digits
    while digits.hasSuffix("0") { digits.removeLast() }
    return "\(milliseconds / 1000).\(digits)"
  }

  /// What happened on the link, in order, each with its time in
  /// microseconds on the recorder's clock; the time is taken under the
  /// lock, so the order and the times agree.
  private final class Log: Sendable {
    private struct State {
      var events: [(time: Int64, event: PeripheralSession.Event)] = []
      var endedAt: Int64?
    }

    private let elapsed: Stopwatch
    private let state = Mutex(State())

    init(_ clock: any Clock<Duration>) { elapsed = Stopwatch(clock) }

    func now() -> Int64 { Self.microseconds(elapsed()) }

    func append(_ event: PeripheralSession.Event) {
      state.withLock { $0.events.append((Self.microseconds(elapsed()), event)) }
    }

    /// Marks the end of the watch (the first call counts).
    func end() {
      state.withLock { state in
        if state.endedAt == nil { state.endedAt = Self.microseconds(elapsed()) }
      }
    }

    var events: [(time: Int64, event: PeripheralSession.Event)] { state.withLock { $0.events } }
    var endedAt: Int64? { state.withLock { $0.endedAt } }

    static func microseconds(_ duration: Duration) -> Int64 { duration.nanoseconds / 1000 }
  }
}
