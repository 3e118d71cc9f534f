import Foundation
import Signals

/// Turns a scenario's `SourceSpec`s into `SignalSource`s: seeds the random
/// ones from the scenario's seed (per device and stream, so adding a device
/// does not change another's data) and reads recordings relative to the
/// scenario file.
public struct SignalFactory: Sendable {
  public var seed: UInt64
  /// Where relative recording paths start: the scenario file's folder.
  public var directory: String

  public init(seed: UInt64, directory: String) {
    self.seed = seed
    self.directory = directory
  }

  public init(scenario: Scenario) {
    let url = URL(fileURLWithPath: scenario.file)
    self.init(seed: scenario.seed, directory: url.deletingLastPathComponent().path)
  }

  /// A seed for `stream` of `device` when the source names none.
  public func seed(device: String, stream: String) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in "\(device)/\(stream)".utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
    return SplitMix64.mix(seed ^ hash)
  }

  /// The source for `spec` on a stream sampled at `sampleRate` Hz.
  public func make(_ spec: SourceSpec, device: String, stream: String, sampleRate: Double) throws(ScenarioError)
    -> any SignalSource
  {
    switch spec {
    case .constant(let value): return ConstantSignal(value)
    case .ramp(let from, let to, let over): return RampSignal(from: from, to: to, duration: over.seconds)
    case .sine(let amplitude, let frequency, let phase, let offset):
      return SineSignal(amplitude: amplitude, frequency: frequency, phase: phase, offset: offset)
    case .noise(let mean, let sd, let seed):
      return NoiseSignal(mean: mean, standardDeviation: sd, seed: seed ?? self.seed(device: device, stream: stream))
    case .ecg(let heartRate, let noise, let arrhythmia, let seed):
      return ECGSignal(
        SyntheticECG(
          sampleRate: sampleRate, heartRate: heartRate, noise: noise, arrhythmiaEpisodes: arrhythmia,
          seed: seed ?? self.seed(device: device, stream: stream)))
    case .ppg(let heartRate, let variability, let amplitude, let noise, let seed):
      return SyntheticPPG(
        heartRate: heartRate, variability: variability, amplitude: amplitude, noise: noise,
        seed: seed ?? self.seed(device: device, stream: stream))
    case .eda(let tonic, let drift, let responses, let spontaneousRate, let noise, let seed):
      return SyntheticEDA(
        tonicLevel: tonic, tonicDrift: drift, responses: responses, spontaneousRate: spontaneousRate, noise: noise,
        seed: seed ?? self.seed(device: device, stream: stream))
    case .temperature(let start, let trendPerHour, let wander, let noise, let seed):
      return TemperatureDrift(
        start: start, trendPerHour: trendPerHour, wander: wander, noise: noise,
        seed: seed ?? self.seed(device: device, stream: stream))
    case .e4Export(let folder, let signal, let loops):
      let export: E4ConnectExport
      do {
        export = try E4ConnectExport(directory: path(folder))
      } catch {
        throw ScenarioError(.badRecording, file: error.file, line: error.line, column: error.column, error.message)
      }
      guard let recorded = export.signals(loops: loops)[signal] else {
        throw ScenarioError(
          .badRecording, file: path(folder), line: 0, column: 0, "the E4 Connect export has no '\(signal)' signal",
          expected: "its CSV file in the folder")
      }
      return recorded
    case .museLSL(let file, let channel, let loops):
      return try MuseLSLRecording.read(path: path(file), channel: channel, loops: loops)
    case .csv(let file, let timeColumn, let valueColumn, let interpolation, let loops):
      return try CSVRecording.read(
        path: path(file), timeColumn: timeColumn, valueColumn: valueColumn,
        interpolation: RecordedSignal.Interpolation(rawValue: interpolation) ?? .hold, loops: loops)
    case .sum(let terms):
      var sources: [any SignalSource] = []
      for (index, term) in terms.enumerated() {
        sources.append(try make(term, device: device, stream: "\(stream)+\(index)", sampleRate: sampleRate))
      }
      return SignalSum(sources)
    }
  }

  /// The source for `device`'s `stream`, as ``make(_:device:stream:sampleRate:)``
  /// makes it; a recording that cannot be read at all (missing, not a
  /// recording) is reported at the scenario line that names it.
  public func make(_ spec: SourceSpec, for device: DeviceSpec, stream: String, sampleRate: Double)
    throws(ScenarioError) -> any SignalSource
  {
    do {
      return try make(spec, device: device.id, stream: stream, sampleRate: sampleRate)
    } catch {
      throw Self.named(
        error, at: device.location(of: "streams.\(stream)"), what: "stream '\(stream)' of '\(device.id)'")
    }
  }

  /// `error` about a whole file (no line of its own) moved to the scenario
  /// line that names the file; an error inside a file keeps its place there.
  public static func named(_ error: ScenarioError, at location: SourceLocation, what: String) -> ScenarioError {
    guard error.line == 0, error.file != location.file, location.line > 0 else { return error }
    var moved = error
    moved.message = "\(what): \(error.message) (\(error.file))"
    moved.file = location.file
    moved.line = location.line
    moved.column = location.column
    return moved
  }

  /// `file` resolved against the scenario's folder.
  public func path(_ file: String) -> String {
    file.hasPrefix("/") ? file : URL(fileURLWithPath: directory).appendingPathComponent(file).path
  }
}
