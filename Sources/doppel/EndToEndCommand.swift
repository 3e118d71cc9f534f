import ArgumentParser
import BlendMicro
import BlendMicroClient
import BlueZ
import DBus
import GATT
import Signals

/// `doppel e2e`: host a device on one adapter and its client on another in
/// one process; print what arrived; exit non-zero when it is wrong.
struct EndToEndCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "e2e",
    abstract: "Host a device on one adapter, run its client on another, and check what arrives.",
    discussion: "Exit status 0 when every check passes, 1 when one fails.")

  @Option(help: "The device model.")
  var model: String = "blend-micro"

  @Option(help: "Adapter hosting the device (hci name or address).")
  var peripheralAdapter: String = "hci0"

  @Option(help: "Adapter the client uses.")
  var centralAdapter: String = "hci1"

  @Option(help: "Seconds of data to receive.")
  var duration: Double = 10

  @Option(help: "Give up finding and connecting after this many seconds.")
  var connectTimeout: Double = 60

  @OptionGroup var device: DeviceOptions

  func validate() throws {
    guard peripheralAdapter != centralAdapter else {
      throw ValidationError("the device and the client need different adapters (both are \(peripheralAdapter))")
    }
    guard duration > 0 else { throw ValidationError("--duration must be positive") }
  }

  func run() async throws {
    _ = try DeviceModelCatalog.entry(model)
    let ecg = SyntheticECG(
      sampleRate: device.sampleRate, heartRate: device.heartRate, noise: device.noise, seed: device.seed)
    let peripheralBus = try await DBusConnection.connect(to: .system)
    let hostAdapter = try await BluetoothAdapter.find(peripheralAdapter, on: peripheralBus)
    try await hostAdapter.powerOn(on: peripheralBus)
    let board = BlendMicro(name: device.name ?? "BlendMicro", ecg: ecg)
    let hosted = try await BlueZPeripheral.host(board, on: hostAdapter, bus: peripheralBus, name: "e2e0")
    print("device: blend-micro on \(hostAdapter)")

    let centralBus = try await DBusConnection.connect(to: .system)
    let clientAdapter = try await BluetoothAdapter.find(centralAdapter, on: centralBus)
    try await clientAdapter.powerOn(on: centralBus)
    let client = BlendMicroClient(link: BlueZCentral(adapter: clientAdapter, bus: centralBus))
    print("client: scanning on \(clientAdapter)…")
    let found = try await client.connect(timeout: .seconds(connectTimeout))
    print("client: connected to \(found.name ?? "?") (\(found.id))")

    let wanted = Int(duration * ecg.sampleRate)
    var samples: [ECGSample] = []
    var malformed = 0
    for try await reading in try await client.readings() {
      switch reading {
      case .sample(let sample):
        samples.append(sample)
        if samples.count % Int(ecg.sampleRate) == 0 {
          print("client: \(samples.count) samples, last \(sample.amplitude) mV at \(sample.time)")
        }
      case .malformed: malformed += 1
      }
      if samples.count >= wanted { break }
    }
    await client.disconnect()
    await hosted.stop()
    await centralBus.close()
    await peripheralBus.close()

    let expected = ecg.samples(0..<samples.count).map { Double(SyntheticECG.text($0)) }
    let firstMismatch = zip(samples.map(\.amplitude), expected).enumerated().first { $0.element.0 != $0.element.1 }?
      .offset
    let analysis = HeartRateAnalysis(
      times: samples.indices.map { Double($0) / ecg.sampleRate }, amplitudes: samples.map(\.amplitude))
    let rate = analysis.heartRate ?? 0
    var failures: [String] = []
    if samples.count < wanted { failures.append("received \(samples.count) of \(wanted) samples") }
    if let index = firstMismatch {
      failures.append("sample \(index) differs from what the device sent (gap or duplicate)")
    }
    if malformed > 0 { failures.append("\(malformed) malformed notifications") }
    if abs(rate - device.heartRate) > 2 {
      failures.append(String(format: "heart rate %.1f bpm, configured %.1f", rate, device.heartRate))
    }
    let elapsed = samples.last?.time ?? .zero
    print(
      String(
        format: "summary: %d samples in %@, %.1f samples/s, heart rate %.1f bpm (configured %.1f), %d malformed",
        samples.count, "\(elapsed)", Double(samples.count) / max(Double(elapsed.components.seconds), 1), rate,
        device.heartRate, malformed))
    if failures.isEmpty {
      print("e2e: PASS")
    } else {
      for failure in failures { print("e2e: FAIL \(failure)") }
      throw ExitCode.failure
    }
  }
}
