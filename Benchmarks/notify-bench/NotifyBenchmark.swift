import ArgumentParser
import BlueZ
import DBus
import GATT

/// `doppel-notify-bench`: the two halves of the notification benchmark.
@main
struct NotifyBenchmark: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "doppel-notify-bench",
    abstract: "Notification throughput and latency through BlueZ (run by ci/bench-notify inside ci/lab).",
    subcommands: [Serve.self, Receive.self])

  /// Hosts the timestamp peripheral.
  struct Serve: AsyncParsableCommand {
    @Option(help: "Adapter to host on.") var adapter = "hci0"
    @Option(help: "Notification interval in microseconds.") var intervalUs = 1000
    @Option(help: "Seconds to serve.") var seconds = 30.0
    @Flag(help: "Notify with D-Bus signals (PropertiesChanged), not on a socket BlueZ acquires.")
    var noNotificationSockets = false

    func run() async throws {
      let bus = try await DBusConnection.connect(to: .system)
      let adapter = try await BluetoothAdapter.find(self.adapter, on: bus)
      let model = TimestampPeripheral(interval: .microseconds(intervalUs))
      let hosted = try await BlueZPeripheral.host(
        model, on: adapter, bus: bus, name: "bench", notificationSockets: !noNotificationSockets)
      print("serving on \(adapter)", terminator: "\n")
      try await Task.sleep(for: .seconds(seconds))
      await hosted.stop()
      print("sent \(await model.sent)")
      await bus.close()
    }
  }

  /// Connects, subscribes, and measures.
  struct Receive: AsyncParsableCommand {
    @Option(help: "Adapter the client uses.") var adapter = "hci1"
    @Option(help: "Seconds to measure, after the first notification.") var seconds = 10.0
    @Option(help: "Label for the output lines.") var label = "doppel"
    @Option(help: "Address of the peripheral to measure (default: the first one found).") var peripheral: String?
    @Option(
      name: .customLong("cpu-of"),
      help: "NAME=PID: report that process's CPU over the measured window, in % of one CPU (repeatable).")
    var cpuOf: [String] = []

    func run() async throws {
      var watched: [String: Int32] = ["receiver": 0]
      for entry in cpuOf {
        let parts = entry.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, let pid = Int32(parts[1]), pid > 0 else {
          throw ValidationError("--cpu-of takes NAME=PID, not '\(entry)'")
        }
        watched[String(parts[0])] = pid
      }
      let bus = try await DBusConnection.connect(to: .system)
      let adapter = try await BluetoothAdapter.find(self.adapter, on: bus)
      let central = BlueZCentral(adapter: adapter, bus: bus)
      var scan = central.scan(filter: ScanFilter(serviceUUIDs: [TimestampPeripheral.service])).makeAsyncIterator()
      var match: DiscoveredPeripheral?
      while let next = await scan.next() {
        if peripheral.map({ $0.uppercased() == next.id.rawValue.uppercased() }) ?? true {
          match = next
          break
        }
      }
      guard let found = match else { throw ValidationError("no benchmark peripheral found") }
      let connection = try await central.connect(found.id, timeout: .seconds(60))
      var latencies: [UInt64] = []
      var malformed = 0
      var first: UInt64?
      var cpuAtFirst: CPUTimes?
      for try await value in try await connection.notifications(of: TimestampPeripheral.stamp) {
        let now = MonotonicTime.microseconds()
        guard let sent = UInt64(String(decoding: value, as: UTF8.self)), sent <= now else {
          malformed += 1
          continue
        }
        if first == nil {
          first = now
          cpuAtFirst = CPUTimes.now(of: watched)
        }
        latencies.append(now - sent)
        if Double(now - first!) >= seconds * 1_000_000 { break }
      }
      let cpuAtEnd = CPUTimes.now(of: watched)
      await connection.disconnect()
      await bus.close()
      let sorted = latencies.sorted()
      func percentile(_ p: Double) -> Double {
        sorted.isEmpty ? .nan : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
      }
      print("\(label).notifications_per_s \(String(format: "%.1f", Double(latencies.count) / seconds))")
      print("\(label).latency_p50_ms \(String(format: "%.2f", percentile(0.50)))")
      print("\(label).latency_p99_ms \(String(format: "%.2f", percentile(0.99)))")
      print("\(label).malformed \(malformed)")
      print("\(label).received \(latencies.count)")
      if let cpuAtFirst {
        let (processes, busy) = cpuAtFirst.shares(until: cpuAtEnd)
        for (name, share) in processes.sorted(by: { $0.key < $1.key }) {
          print("\(label).cpu_\(name)_pct \(String(format: "%.1f", share))")
        }
        print("\(label).cpu_machine_busy_pct \(String(format: "%.1f", busy))")
      }
    }
  }
}
