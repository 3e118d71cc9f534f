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
  /// The sum of several sources.
  case sum([SourceSpec])
}
