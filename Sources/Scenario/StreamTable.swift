/// Running statistics per device and stream while a run goes on, found by
/// comparing names rather than hashing them: a run has a handful of
/// streams, and samples arrive millions of times.
struct StreamTable {
  private var entries: [(device: String, stream: String, statistics: StreamStatistics)] = []
  /// The entry found last: consecutive samples are often of the same stream.
  private var last = 0

  /// Adds a sample of `stream` of `device`.
  mutating func add(_ value: Double, at time: Double, stream: String, device: String) {
    entries[index(of: stream, device: device)].statistics.add(value, at: time)
  }

  /// Adds samples of `stream` of `device`, `values[i]` at `time(i)`.
  mutating func add(
    _ values: [Double], at time: (Int) -> Double, stream: String, device: String
  ) {
    entries[index(of: stream, device: device)].statistics.add(values, at: time)
  }

  private mutating func index(of stream: String, device: String) -> Int {
    if last < entries.count, entries[last].stream == stream, entries[last].device == device { return last }
    if let found = entries.firstIndex(where: { $0.stream == stream && $0.device == device }) {
      last = found
    } else {
      entries.append((device, stream, StreamStatistics()))
      last = entries.count - 1
    }
    return last
  }

  /// Every stream's statistics put into its device's observations.
  func merged(into devices: [String: DeviceObservations]) -> [String: DeviceObservations] {
    var devices = devices
    for entry in entries {
      devices[entry.device, default: DeviceObservations()].streams[entry.stream] = entry.statistics
    }
    return devices
  }
}
