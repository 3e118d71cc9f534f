import ArgumentParser
import ActiGraphLink
import BlendMicro
import E4
import EmStatPico
import GATT
import Signals

/// The device models the CLI can host, by the names scenarios and flags use.
enum DeviceModelCatalog {
  /// A model the CLI knows: its name, a one-line summary, and how to make one.
  struct Entry: Sendable {
    let name: String
    let summary: String
    let make: @Sendable (DeviceConfiguration) -> any PeripheralModel
  }

  static let entries: [Entry] = [
    Entry(
      name: "blend-micro",
      summary: "RedBearLabs Blend Micro with the Kardia ECG firmware: ASCII ECG samples on the nRF8001 UART service",
      make: { options in
        BlendMicro(
          name: options.name ?? "BlendMicro",
          ecg: SyntheticECG(
            sampleRate: options.sampleRate, heartRate: options.heartRate, noise: options.noise, seed: options.seed))
      }),
    Entry(
      name: "e4",
      summary: "Empatica E4 wristband: BVP 64 Hz, acceleration 32 Hz, EDA and temperature 4 Hz, IBI, battery, tags",
      make: { options in
        E4(
          configuration: E4Configuration(name: options.name ?? "Empatica E4"),
          bvp: SyntheticPPG(heartRate: options.heartRate, seed: options.seed),
          eda: SyntheticEDA(spontaneousRate: 2, seed: options.seed),
          temperature: TemperatureDrift(seed: options.seed))
      }),
    Entry(
      name: "actigraph-link",
      summary: "ActiGraph Link (GT9X) activity monitor: 24 h of 60 s epochs to download, raw acceleration 30 Hz",
      make: { options in
        ActiGraphLink(
          configuration: ActiGraphLinkConfiguration(
            serialNumber: options.name ?? "TAS1A14758923", seed: options.seed))
      }),
    Entry(
      name: "emstat-pico",
      summary:
        "PalmSens EmStat Pico potentiostat behind a Laird VSP service: MethodSCRIPT in, packages out (10 kΩ dummy cell)",
      make: { options in
        EmStatPico(configuration: EmStatPicoConfiguration(name: options.name ?? "EmStat Pico", seed: options.seed))
      }),
  ]

  static var names: [String] { entries.map(\.name) }

  /// The entry called `name`, or a validation error listing the known ones.
  static func entry(_ name: String) throws -> Entry {
    guard let entry = entries.first(where: { $0.name == name }) else {
      throw ValidationError("unknown device model '\(name)'; known models: \(names.joined(separator: ", "))")
    }
    return entry
  }
}

/// How to configure an emulated device; every field has the model's default.
struct DeviceConfiguration: Sendable {
  var name: String?
  var sampleRate: Double = 100
  var heartRate: Double = 72
  var noise: Double = 0.01
  var seed: UInt64 = 1
}

/// Command-line options that configure an emulated device.
struct DeviceOptions: ParsableArguments {
  @Option(help: "The advertised name (default: the model's own).")
  var name: String?

  @Option(help: "ECG samples per second (blend-micro).")
  var sampleRate: Double = 100

  @Option(help: "Heart rate in beats per minute (blend-micro).")
  var heartRate: Double = 72

  @Option(help: "Noise standard deviation in mV (blend-micro).")
  var noise: Double = 0.01

  @Option(help: "Seed for noise and irregular beats.")
  var seed: UInt64 = 1

  var configuration: DeviceConfiguration {
    DeviceConfiguration(name: name, sampleRate: sampleRate, heartRate: heartRate, noise: noise, seed: seed)
  }

  func validate() throws {
    guard sampleRate > 0, sampleRate <= 1000 else {
      throw ValidationError("--sample-rate must be in (0, 1000], got \(sampleRate)")
    }
    guard heartRate >= 20, heartRate <= 250 else {
      throw ValidationError("--heart-rate must be 20…250 bpm, got \(heartRate)")
    }
    guard noise >= 0 else { throw ValidationError("--noise must not be negative") }
    if let name, name.isEmpty || name.utf8.count > 29 { throw ValidationError("--name must be 1…29 bytes") }
  }
}
