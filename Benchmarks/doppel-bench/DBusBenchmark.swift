import DBus
import Foundation
import Synchronization

/// `doppel-bench dbus`: round trips between two connections, A and B, of this
/// process on one bus, through Doppel's DBus target. Workloads (the peers in
/// Benchmarks/peers run the same ones, defined the same way):
///
/// - call: B calls A's `org.doppel.Bench.Ping(u) -> u` and awaits the reply
///   before the next call. A round trip is one call and its reply.
/// - signal: A sets its `Value` property (`ay`, `--payload` bytes, stamped
///   with a sequence number) and so emits `PropertiesChanged`; B, on
///   receiving it, sets its own `Value` to the bytes it got; A waits for B's
///   `PropertiesChanged` before the next. A round trip is the two signals.
/// - stream: A emits `PropertiesChanged` in batches of `--batch`, the next
///   batch once B has received all of the last; figure: signals B received
///   per second. B takes them in a handler on its connection's thread
///   (`receiveSignals`), as the peers take them in a callback.
///
/// The benchmark's own loops run on the cooperative pool and await each
/// connection call across to the connection's queue, as Doppel's other targets
/// do. With `--isolated` they run on the connection's executor instead (an
/// `isolated` parameter), with no hop per message: the difference is the cost
/// of those hops. With `--on-thread` they stay nonisolated but run on the
/// connection's thread, as tasks that prefer it (`withTaskExecutorPreference`
/// of `DBusConnection.taskExecutor`): a call is sent from the thread and its
/// reply resumes the loop there, with no thread woken; a synchronous
/// connection method (`updateProperties`) is a hop to the actor and back, two
/// jobs on the same thread.
struct DBusBenchmark {
  static let interface = "org.doppel.Bench"

  let options: DBusBenchmarkOptions

  func run() async throws {
    let a = try await DBusConnection.connect(to: .address(options.address))
    let b = try await DBusConnection.connect(to: .address(options.address))
    let path = try ObjectPath("/org/doppel/bench")
    try await a.export(path, interfaces: [Self.benchInterface(withPing: true)])
    try await b.export(path, interfaces: [Self.benchInterface(withPing: false)])
    print(
      "# doppel-bench dbus (Swift, Doppel's DBus\(options.isolated ? ", loops isolated to the connections" : "")): "
        + "payload \(options.payload) B, \(options.budget) per workload, warmup \(options.warmup)")
    for workload in options.workloads {
      switch workload {
      case .call:
        try await calls(from: b, to: a, path: path).report("call")
      case .signal:
        try await signalRoundTrips(a, b, path: path).report("signal")
      case .stream:
        let (count, perSecond) = try await stream(from: a, to: b, path: path)
        print("dbus.stream.signals_per_s \(String(format: "%.1f", perSecond))")
        print("dbus.stream.signals \(count)")
      }
    }
    await b.close()
    await a.close()
  }

  /// Where a loop that talks through `connection` runs: on the connection's executor with
  /// `--isolated`, else on the cooperative pool.
  private func home(_ connection: DBusConnection) -> (any Actor)? { options.isolated ? connection : nil }

  /// The task executor that a loop talking through `connection` prefers: with
  /// `--on-thread` the connection's thread (the loop stays nonisolated), else none.
  private func thread(_ connection: DBusConnection) -> (any TaskExecutor)? {
    options.onThread ? connection.taskExecutor : nil
  }

  // MARK: Workloads

  private func calls(from b: DBusConnection, to a: DBusConnection, path: ObjectPath) async throws -> RoundTripSamples {
    let destination = a.uniqueName
    return try await withTaskExecutorPreference(thread(b)) {
      try await measure(on: home(b)) { sequence in
        let reply = try await b.call(
          destination: destination, path: path, interface: Self.interface, method: "Ping",
          arguments: [.uint32(sequence)])
        guard reply == [.uint32(sequence)] else { throw BenchFailure("Ping(\(sequence)) returned \(reply)") }
      }
    }
  }

  private func signalRoundTrips(_ a: DBusConnection, _ b: DBusConnection, path: ObjectPath) async throws
    -> RoundTripSamples
  {
    let fromA = try await b.signals(matching: Self.propertiesChanged(sender: a.uniqueName, path: path))
    let fromB = try await a.signals(matching: Self.propertiesChanged(sender: b.uniqueName, path: path))
    let echo = Task(executorPreference: thread(b)) { [home = home(b)] in
      try await Self.echo(fromA, by: b, path: path, on: home)
    }
    let samples = try await withTaskExecutorPreference(thread(a)) {
      var echoes = fromB.makeAsyncIterator()
      var payload = Self.payload(size: options.payload)
      return try await measure(on: home(a)) { sequence in
        Self.stamp(&payload, sequence)
        try await a.updateProperties(at: path, interface: Self.interface, ["Value": .bytes(payload)])
        guard let message = try await echoes.next(isolation: #isolation) else {
          throw BenchFailure("the signal stream ended")
        }
        guard let value = Self.value(of: message), value.count == payload.count, Self.sequence(of: value) == sequence
        else { throw BenchFailure("echo \(sequence) is not what was sent") }
      }
    }
    echo.cancel()
    _ = await echo.result
    return samples
  }

  /// B's half of the signal workload: sets its `Value` to each value A announces.
  private static func echo(
    _ signals: DBusSignalStream, by b: DBusConnection, path: ObjectPath, on isolation: isolated (any Actor)?
  ) async throws {
    for try await message in signals {
      guard let value = value(of: message) else { throw BenchFailure("a PropertiesChanged without Value") }
      try await b.updateProperties(at: path, interface: interface, ["Value": .bytes(value)])
    }
  }

  private func stream(from a: DBusConnection, to b: DBusConnection, path: ObjectPath) async throws -> (Int, Double) {
    let batch = options.batch
    // B counts on its connection's thread, as the peers count in a callback:
    // the emitting task is woken once a batch, not once a signal.
    let (progress, reached) = AsyncThrowingStream.makeStream(of: Int.self)
    let received = Mutex(0)
    let fromA = try await b.receiveSignals(matching: Self.propertiesChanged(sender: a.uniqueName, path: path)) {
      event in
      guard case .signal(let message) = event else {
        reached.finish(throwing: BenchFailure("B's connection closed"))
        return
      }
      received.withLock { received in
        guard let value = Self.value(of: message), Self.sequence(of: value) == UInt32(truncatingIfNeeded: received)
        else {
          reached.finish(throwing: BenchFailure("signal \(received) arrived out of order"))
          return
        }
        received += 1
        if received % batch == 0 { reached.yield(received) }
      }
    }
    defer { fromA.cancel() }
    var batchesDone = progress.makeAsyncIterator()
    var payload = Self.payload(size: options.payload)
    var sent = 0
    func sendBatch() async throws {
      payload = try await Self.emit(batch, from: sent, payload: payload, by: a, path: path, on: home(a))
      sent += batch
      guard let received = try await batchesDone.next(isolation: #isolation), received == sent else {
        throw BenchFailure("B stopped receiving after \(sent - batch) signals")
      }
    }
    return try await withTaskExecutorPreference(thread(a)) {
      for _ in 0..<(options.warmup + batch - 1) / batch { try await sendBatch() }
      let warm = sent
      let start = MonotonicClock.nanoseconds()
      var elapsed: UInt64 = 0
      repeat {
        try await sendBatch()
        elapsed = MonotonicClock.nanoseconds() - start
      } while !options.budget.isSpent(elapsed: elapsed, done: sent - warm)
      return (sent - warm, Double(sent - warm) * 1e9 / Double(elapsed))
    }
  }

  /// A's half of the stream workload: `count` signals stamped `first`…; returns the payload buffer.
  private static func emit(
    _ count: Int, from first: Int, payload: [UInt8], by a: DBusConnection, path: ObjectPath,
    on isolation: isolated (any Actor)?
  ) async throws -> [UInt8] {
    var payload = payload
    for index in first..<first + count {
      stamp(&payload, UInt32(truncatingIfNeeded: index))
      try await a.updateProperties(at: path, interface: interface, ["Value": .bytes(payload)])
    }
    return payload
  }

  /// Runs `roundTrip` `--warmup` times, then times each run of it until the budget is spent,
  /// all on `isolation`'s executor (the cooperative pool when `nil`).
  private func measure(
    on isolation: isolated (any Actor)?, _ roundTrip: nonisolated(nonsending) (UInt32) async throws -> Void
  ) async throws -> RoundTripSamples {
    var sequence: UInt32 = 0
    for _ in 0..<options.warmup {
      try await roundTrip(sequence)
      sequence &+= 1
    }
    var samples = RoundTripSamples()
    if case .count(let count) = options.budget { samples.latencies.reserveCapacity(count) }
    let start = MonotonicClock.nanoseconds()
    var end = start
    repeat {
      let before = end
      try await roundTrip(sequence)
      end = MonotonicClock.nanoseconds()
      samples.latencies.append(end - before)
      sequence &+= 1
    } while !options.budget.isSpent(elapsed: end - start, done: samples.latencies.count)
    samples.elapsed = end - start
    return samples
  }

  // MARK: Helpers

  private static func benchInterface(withPing: Bool) throws -> DBusInterface {
    // Answered on A's connection thread as the call is read, as the peers
    // answer in a callback on their loop.
    let ping = try DBusMethod(name: "Ping", input: "u", output: "u", immediate: { call in call.body })
    return try DBusInterface(
      name: interface, methods: withPing ? [ping] : [], properties: [DBusProperty(name: "Value", value: .bytes([]))])
  }

  private static func propertiesChanged(sender: String, path: ObjectPath) throws -> DBusMatchRule {
    try DBusMatchRule(
      sender: sender, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: path)
  }

  /// The `Value` bytes of a `PropertiesChanged` signal.
  private static func value(of message: DBusMessage) -> [UInt8]? {
    guard message.body.count == 3 else { return nil }
    return message.body[1].dictionary?["Value"]?.bytes
  }

  private static func payload(size: Int) -> [UInt8] {
    (0..<size).map { UInt8(truncatingIfNeeded: $0) }
  }

  /// Writes `sequence` little-endian into the first four bytes.
  private static func stamp(_ payload: inout [UInt8], _ sequence: UInt32) {
    for index in 0..<4 { payload[index] = UInt8(truncatingIfNeeded: sequence >> (8 * index)) }
  }

  private static func sequence(of value: [UInt8]) -> UInt32? {
    guard value.count >= 4 else { return nil }
    return (0..<4).reduce(0) { $0 | UInt32(value[$1]) << (8 * $1) }
  }
}
