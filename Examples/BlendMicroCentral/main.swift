// A small central for a Blend Micro ECG board, written on Doppel's BlueZ
// library the way a user's own Swift program would be: it depends on the
// `BlueZ` and `GATT` products only, knows nothing of Doppel's device models
// or scenarios, and is held to a scenario from outside by `doppel test`.
//
//   blend-micro-central [--samples N] [--timeout SECONDS]
//
// It finds the board (DOPPEL_DEVICE_NAME) from the adapter DOPPEL_CENTRAL_ADAPTER,
// subscribes to UART TX, and reads ECG samples until it has N, connecting
// again whenever the link drops. Exit 0 when it got them, 1 when not in time.
import BlueZ
import DBus
import Foundation
import GATT

let uart: BluetoothUUID = "713D0000-503E-4C75-BA94-3148F18D941E"
let tx = CharacteristicAddress(service: uart, characteristic: "713D0002-503E-4C75-BA94-3148F18D941E")

func option(_ name: String, default value: Double) -> Double {
  guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count,
    let number = Double(CommandLine.arguments[index + 1])
  else { return value }
  return number
}

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let wanted = Int(option("--samples", default: 300))
let limit = Duration.seconds(option("--timeout", default: 90))
let environment = ProcessInfo.processInfo.environment
let clock = ContinuousClock()
let deadline = clock.now + limit

let bus = try await DBusConnection.connect(to: .system)
let adapter = try await BluetoothAdapter.find(environment["DOPPEL_CENTRAL_ADAPTER"], on: bus)
try await adapter.powerOn(on: bus)
let central = BlueZCentral(adapter: adapter, bus: bus)
let filter = ScanFilter(serviceUUIDs: [uart], namePrefix: environment["DOPPEL_DEVICE_NAME"])

var samples = 0
var connections = 0
while samples < wanted, clock.now < deadline {
  do {
    let board = try await central.firstPeripheral(
      matching: filter, within: deadline - clock.now, clock: clock, what: "Blend Micro")
    let connection = try await central.connect(board.id, timeout: .seconds(30))
    connections += 1
    say("connected (\(connections)) to \(board.name ?? "?")")
    do {
      for try await value in try await connection.notifications(of: tx) {
        if Double(String(decoding: value, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) != nil {
          samples += 1
        }
        if samples >= wanted || clock.now >= deadline { break }
      }
      say("the stream ended after \(samples) samples")
    } catch {
      say("link \(connections) lost after \(samples) samples: \(error)")
    }
    if samples >= wanted { await connection.disconnect() }
  } catch {
    say("connecting failed: \(error)")
    try? await Task.sleep(for: .seconds(1))
  }
}
await bus.close()
say("\(samples) samples over \(connections) connection(s)")
exit(samples >= wanted ? 0 : 1)
