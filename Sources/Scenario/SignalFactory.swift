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

  /// `file` resolved against the scenario's folder.
  public func path(_ file: String) -> String {
    file.hasPrefix("/") ? file : URL(fileURLWithPath: directory).appendingPathComponent(file).path
  }
}
