import GATT
import Synchronization

/// The benchmark's device: while a central is subscribed, notifies the send
/// time (`CLOCK_MONOTONIC` µs, as decimal text) on a drift-free schedule,
/// catching up at once when behind it.
actor TimestampPeripheral: PeripheralModel {
  static let service: BluetoothUUID = "0000b0b0-0000-1000-8000-00805f9b34fb"
  static let stamp = CharacteristicAddress(service: service, characteristic: "0000b0b1-0000-1000-8000-00805f9b34fb")

  nonisolated let profile = try! GATTProfile([
    ServiceDefinition(
      service, name: "Benchmark",
      characteristics: [CharacteristicDefinition(stamp.characteristic, name: "Send time", properties: [.notify])])
  ])
  nonisolated let advertisement = AdvertisementData(localName: "DoppelBench", serviceUUIDs: [service])
  let interval: Duration
  private var host: (any PeripheralHost)?
  private var task: Task<Void, Never>?
  /// Counted under a lock: a notification sent at once takes no switch to the actor.
  private let count = Mutex(0)
  var sent: Int { count.withLock { $0 } }

  init(interval: Duration) { self.interval = interval }

  func start(host: any PeripheralHost) async { self.host = host }
  func stop() async { task?.cancel() }

  func subscriptionChanged(characteristic: CharacteristicAddress, central: CentralID, subscribed: Bool) async {
    task?.cancel()
    task = nil
    guard subscribed, let host else { return }
    task = Task { await Self.stream(host, clock: host.clock, interval: interval, model: self) }
  }

  private static func stream<C: Clock<Duration>>(
    _ host: any PeripheralHost, clock: C, interval: Duration, model: TimestampPeripheral
  ) async {
    let start = clock.now
    var n = 0
    while !Task.isCancelled {
      n += 1
      // Behind schedule (a busy machine), the notifications due go out at
      // once, without a sleep and its wake between them, as the native peer
      // catches up; on schedule, one sleep each.
      let due = start.advanced(by: interval * n)
      if clock.now < due {
        do { try await clock.sleep(until: due, tolerance: nil) } catch { return }
      }
      let text = Array(String(MonotonicTime.microseconds()).utf8)
      do throws(GATTError) {
        try await host.notify(text, characteristic: stamp)
        model.count.withLock { $0 += 1 }
      } catch {}
    }
  }
}
