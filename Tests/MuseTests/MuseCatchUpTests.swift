import GATT
import Muse
import Synchronization
import Testing

/// A run's end over a busy stack: the headband, held back by a host that is
/// slow to take its notifications, sends what its timeline made due before
/// it is silenced (`catchUp()`).
@Suite(.timeLimit(.minutes(1)))
struct MuseCatchUpTests {
  /// A host on the wall clock that takes notifications only once let go
  /// (`notificationsTaken()` waits meanwhile), as a busy bluetoothd reads late.
  final class SlowReaderHost: PeripheralHost {
    private let state = Mutex(
      (held: true, sent: [CharacteristicAddress: Int](), last: [CharacteristicAddress: [UInt8]]()))
    var clock: any Clock<Duration> { ContinuousClock() }

    func letGo() { state.withLock { $0.held = false } }
    func sent(to address: CharacteristicAddress) -> Int { state.withLock { $0.sent[address] ?? 0 } }
    func last(to address: CharacteristicAddress) -> [UInt8]? { state.withLock { $0.last[address] } }

    nonisolated(nonsending) func notify(_ value: [UInt8], characteristic: CharacteristicAddress)
      async throws(GATTError)
    {
      state.withLock {
        $0.sent[characteristic, default: 0] += 1
        $0.last[characteristic] = value
      }
    }
    nonisolated(nonsending) func indicate(_ value: [UInt8], characteristic: CharacteristicAddress)
      async throws(GATTError)
    {}
    func subscribers(of characteristic: CharacteristicAddress) async -> [CentralID] { [CentralID("central")] }
    var connectedCentrals: [CentralID] { get async { [CentralID("central")] } }
    func mtu(for central: CentralID) async -> Int? { 247 }
    func disconnect(_ central: CentralID) async {}
    func setAdvertisingEnabled(_ enabled: Bool) async {}
    nonisolated(nonsending) func notificationsTaken() async {
      while state.withLock({ $0.held }) { try? await Task.sleep(for: .milliseconds(2)) }
    }
  }

  /// A headband streaming to `host` for `held` (the host taking nothing),
  /// the time it started, and a task that lets the host go 100 ms later.
  private func heldBack(
    _ headband: MuseHeadband, by host: SlowReaderHost, for held: Duration
  ) async throws -> (started: ContinuousClock.Instant, letGo: Task<Void, Never>) {
    await headband.start(host: host)
    await headband.centralConnected(CentralID("central"))
    try await headband.write(
      characteristic: MuseHeadband.control, value: MuseCommand.frame("d"), type: .withResponse,
      central: CentralID("central"))
    let started = ContinuousClock.now
    try await Task.sleep(for: held)
    // At most the first set's TP9 went before AF7 waited for the host.
    #expect(host.sent(to: MuseHeadband.eeg(.tp9)) <= 1)
    let letGo = Task {
      try? await Task.sleep(for: .milliseconds(100))
      host.letGo()
    }
    return (started, letGo)
  }

  @Test func catchUpReturnsOnceEverythingDueIsSent() async throws {
    let host = SlowReaderHost()
    let headband = MuseHeadband()
    // Held back for 400 ms: about 8 EEG sets due.
    let (started, letGo) = try await heldBack(headband, by: host, for: .milliseconds(400))
    let tp9 = MuseHeadband.eeg(.tp9)
    let asked = ContinuousClock.now
    await headband.catchUp()
    // 256 samples a second, 12 a packet: what was due when catchUp was asked.
    let due = Int((asked - started).seconds * 256 / 12)
    #expect(due >= 8)
    #expect(host.sent(to: tp9) >= due - 1, "\(host.sent(to: tp9)) TP9 packets sent, \(due) due")
    await letGo.value
    await headband.stop()
  }

  /// A battery that empties switches the headband off only after it sent
  /// what it had sampled, with the level it had then, and nothing sampled
  /// after: a held-back host does not lose the last seconds.
  @Test func anEmptyBatterySendsWhatWasSampledBeforeSwitchingOff() async throws {
    let host = SlowReaderHost()
    let headband = MuseHeadband(configuration: MuseConfiguration(batteryLevel: 0.5))
    // Held back past the second telemetry packet (one at once, then one a second).
    let (started, letGo) = try await heldBack(headband, by: host, for: .milliseconds(1200))
    let tp9 = MuseHeadband.eeg(.tp9)
    let emptied = ContinuousClock.now
    await headband.setBattery(0)
    let due = Int((emptied - started).seconds * 256 / 12)
    #expect(await !headband.isPoweredOn)
    #expect(await !headband.isStreaming)
    #expect(host.sent(to: tp9) >= due - 1, "\(host.sent(to: tp9)) TP9 packets sent, \(due) due")
    // Nothing sampled after the battery emptied, though the catch-up took 100 ms and more.
    #expect(host.sent(to: tp9) <= due + 1, "\(host.sent(to: tp9)) TP9 packets sent, \(due) due")
    #expect(host.sent(to: MuseHeadband.telemetry) >= 2)
    // The last telemetry reports the level before it emptied (percent · 512 after the index).
    let telemetry = try #require(host.last(to: MuseHeadband.telemetry))
    let percent = Double(UInt16(telemetry[2]) << 8 | UInt16(telemetry[3])) / 512
    #expect(percent > 40, "the last telemetry said \(percent) %")
    let atOff = host.sent(to: tp9)
    try await Task.sleep(for: .milliseconds(200))
    #expect(host.sent(to: tp9) == atOff)
    await letGo.value
    await headband.stop()
  }

  @Test func catchUpReturnsAtOnceWhenNothingStreams() async {
    let headband = MuseHeadband()
    await headband.start(host: SlowReaderHost())
    let clock = ContinuousClock()
    let start = clock.now
    await headband.catchUp()
    #expect(clock.now - start < .seconds(1))
  }
}
