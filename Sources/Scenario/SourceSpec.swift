import Signals

/// What a device stream carries, as a scenario describes it. `SignalFactory`
/// turns it into a `SignalSource`.
public indirect enum SourceSpec: Hashable, Sendable {
  case constant(Double)
  case ramp(from: Double, to: Double, over: Duration)
  case sine(amplitude: Double, frequency: Double, phase: Double, offset: Double)
  /// Gaussian noise; `seed` nil takes one from the scenario's seed.
  case noise(mean: Double, standardDeviation: Double, seed: UInt64?)
  /// A synthetic ECG (mV) at the device's sample rate.
  case ecg(heartRate: Double, noise: Double, arrhythmia: [ClosedRange<Double>], seed: UInt64?)
  /// A recorded CSV file with a time column (seconds) and a value column.
  case csv(file: String, timeColumn: String, valueColumn: String, interpolation: String, loops: Bool)
  /// A synthetic pulse wave (blood volume pulse) with a heart rate.
  case ppg(heartRate: Double, variability: Double, amplitude: Double, noise: Double, seed: UInt64?)
  /// Synthetic skin conductance (µS): a tonic level with responses.
  case eda(
    tonic: Double, drift: Double, responses: [SkinConductanceResponse], spontaneousRate: Double, noise: Double,
    seed: UInt64?)
  /// Skin temperature (°C) drifting slowly.
  case temperature(start: Double, trendPerHour: Double, wander: Double, noise: Double, seed: UInt64?)
  /// One signal of an E4 Connect export folder (`bvp`, `eda`, `temperature`, `acc.x`, `acc.y`, `acc.z`).
  case e4Export(folder: String, signal: String, loops: Bool)
  /// One channel (`TP9`, `AF7`, `AF8`, `TP10`, `Right AUX`) of a CSV file
  /// muse-lsl recorded: one row per sample at 256 Hz.
  case museLSL(file: String, channel: String, loops: Bool)
  /// The sum of several sources.
  case sum([SourceSpec])
}
