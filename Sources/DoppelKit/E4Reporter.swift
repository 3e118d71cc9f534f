import E4Link
import Foundation
import Scenario
import Synchronization

/// The E4 client's delegate in a scenario run: reports every value the
/// wristband sends to the run's observer, with the device's timestamps as
/// seconds from the run's start, and the heart rate over the last ten
/// interbeat intervals.
final class E4Reporter: EmpaticaDeviceDelegate {
  private let observer: ClientObserver
  private let device: String
  /// The Unix time the run started at.
  private let origin: Double
  private let recentIntervals = Mutex<[Double]>([])

  init(observer: ClientObserver, device: String, origin: Double) {
    self.observer = observer
    self.device = device
    self.origin = origin
  }

  func didReceiveBVP(_ bvp: Float, withTimestamp timestamp: Double, fromDevice manager: EmpaticaDeviceManager) {
    observer.sample(Double(bvp), stream: "bvp", device: device, time: timestamp - origin)
  }

  func didReceiveGSR(_ gsr: Float, withTimestamp timestamp: Double, fromDevice manager: EmpaticaDeviceManager) {
    observer.sample(Double(gsr), stream: "eda", device: device, time: timestamp - origin)
  }

  func didReceiveTemperature(
    _ temp: Float, withTimestamp timestamp: Double, fromDevice manager: EmpaticaDeviceManager
  ) {
    observer.sample(Double(temp), stream: "temperature", device: device, time: timestamp - origin)
  }

  func didReceiveAccelerationX(
    _ x: Int8, y: Int8, z: Int8, withTimestamp timestamp: Double, fromDevice manager: EmpaticaDeviceManager
  ) {
    let g = E4Acceleration(x: x, y: y, z: z, timestamp: timestamp).g
    let time = timestamp - origin
    observer.samples([(g.x, "acc.x", time), (g.y, "acc.y", time), (g.z, "acc.z", time)], device: device)
  }

  func didReceiveIBI(_ ibi: Float, withTimestamp timestamp: Double, fromDevice manager: EmpaticaDeviceManager) {
    observer.event("ibi", device: device)
    let heartRate = recentIntervals.withLock { recent in
      recent.append(Double(ibi))
      if recent.count > 10 { recent.removeFirst() }
      return 60 * Double(recent.count) / recent.reduce(0, +)
    }
    observer.metric("heart-rate", heartRate, device: device)
  }

  func didReceiveBatteryLevel(
    _ level: Float, withTimestamp timestamp: Double, fromDevice manager: EmpaticaDeviceManager
  ) {
    observer.event("battery", device: device, detail: String(format: "%.0f %%", Double(level) * 100))
    observer.metric("battery", Double(level), device: device)
  }

  func didReceiveTag(atTimestamp timestamp: Double, fromDevice manager: EmpaticaDeviceManager) {
    observer.event("tag", device: device, detail: String(format: "at %.3f s", timestamp - origin))
  }
}
