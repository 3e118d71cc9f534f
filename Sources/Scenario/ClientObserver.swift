import Foundation
import GATT
import Synchronization

/// Where a client stack reports what it observes during an end-to-end run:
/// samples per stream, events, derived figures, errors. Times are seconds
/// from the start of the run on the run's clock.
///
/// Not an actor: a report is a synchronous call under a lock (it only
/// updates running statistics), so a client reporting every sample does not
/// switch executors twice a sample, and an SDK's synchronous callbacks (the
/// E4's device delegate) can report directly.
public final class ClientObserver: Sendable {
  private let devices = Mutex<[String: DeviceObservations]>([:])
  /// The streams' statistics, apart: every sample goes there.
  private let streams = Mutex(StreamTable())
  private let elapsed: Stopwatch
  private let progress: @Sendable (String) -> Void
  private let live: LiveSample?
  private let reports = Atomic<Int>(0)

  /// Receives every sample as it is reported (`doppel watch` prints them):
  /// device, stream, time in seconds, value.
  public typealias LiveSample = @Sendable (_ device: String, _ stream: String, _ time: Double, _ value: Double) -> Void

  /// - Parameters:
  ///   - clock: the run's clock; times count from now.
  ///   - progress: receives a line for each notable event (connections, errors).
  ///   - live: receives every sample, when given.
  public init(
    clock: any Clock<Duration>, progress: @escaping @Sendable (String) -> Void = { _ in }, live: LiveSample? = nil
  ) {
    self.elapsed = Stopwatch(clock)
    self.progress = progress
    self.live = live
  }

  /// Seconds since the start of the run.
  public var now: Double { elapsed().seconds }

  /// How many reports (samples, events, metrics, errors) arrived so far: a
  /// run that ended waits until this stops moving (`ScenarioTransport.drain`).
  public var reportCount: Int { reports.load(ordering: .relaxed) }

  private func counted() { reports.add(1, ordering: .relaxed) }

  /// A sample of `stream`; `time` is the device's time stamp in seconds from
  /// the start of the run when the protocol carries one, else the arrival time.
  public func sample(_ value: Double, stream: String, device: String, time: Double? = nil) {
    counted()
    let time = time ?? now
    streams.withLock { $0.add(value, at: time, stream: stream, device: device) }
    live?(device, stream, time, value)
  }

  /// Evenly spaced samples of one stream (a packet's worth): `values[i]` at
  /// `start + i · interval` seconds from the start of the run.
  public func samples(_ values: [Double], stream: String, device: String, start: Double, interval: Double) {
    counted()
    streams.withLock { $0.add(values, at: { start + Double($0) * interval }, stream: stream, device: device) }
    if let live {
      for (i, value) in values.enumerated() { live(device, stream, start + Double(i) * interval, value) }
    }
  }

  /// Samples of one or more streams at once (one call to the observer for a
  /// packet's worth), in order; each as `sample(_:stream:device:time:)`.
  public func samples(_ batch: [(value: Double, stream: String, time: Double?)], device: String) {
    counted()
    let now = now
    streams.withLock { streams in
      for (value, stream, time) in batch { streams.add(value, at: time ?? now, stream: stream, device: device) }
    }
    if let live {
      for (value, stream, time) in batch { live(device, stream, time ?? now, value) }
    }
  }

  /// An event (`connected`, `disconnected`, `malformed`, `tag`, …).
  public func event(_ name: String, device: String, detail: String? = nil) {
    counted()
    let now = now
    let seen = devices.withLock { devices in
      devices[device, default: DeviceObservations()].events[name, default: 0] += 1
      if name == "connected", devices[device]?.connectedAt == nil { devices[device]?.connectedAt = now }
      return devices[device]?.events[name] ?? 0
    }
    // The first few of each kind, then every hundredth, so frequent events do not drown the rest.
    if seen <= 3 || seen % 100 == 0 {
      progress(String(format: "%8.3f s  %@: %@%@", now, device, name, detail.map { " (\($0))" } ?? ""))
    }
  }

  /// The current value of a derived figure (`heart-rate`, …).
  public func metric(_ name: String, _ value: Double, device: String) {
    counted()
    devices.withLock { $0[device, default: DeviceObservations()].metrics[name] = value }
  }

  /// A drawing of what the client's app shows, as an `<svg>` element whose
  /// text is escaped (a report shows it as it is); replaces an earlier one
  /// with the same title.
  public func drawing(_ title: String, svg: String, device: String) {
    devices.withLock { $0[device, default: DeviceObservations()].drawings[title] = svg }
  }

  /// An error the client reported.
  public func error(_ message: String, device: String) {
    counted()
    devices.withLock { devices in
      var observations = devices[device, default: DeviceObservations()]
      if observations.errors.count < 100 { observations.errors.append(message) } else { observations.moreErrors += 1 }
      devices[device] = observations
    }
    progress(String(format: "%8.3f s  %@: error: %@", now, device, message))
  }

  /// Everything observed so far, by device id.
  public var observations: [String: DeviceObservations] {
    let table = streams.withLock { $0 }
    return table.merged(into: devices.withLock { $0 })
  }
}
