import E4Link
import Foundation
import Scenario
import Synchronization

/// The E4 client's delegate in a scenario run: reports every value the
/// wristband sends to the run's observer, with the device's timestamps as
/// seconds from the run's start, and the heart rate over the last ten
/// interbeat intervals.
final class E4Reporter: E4DeviceDelegate {
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

  func didReceiveBVP(_ sample: E4Sample, device manager: E4DeviceManager) {
    observer.sample(sample.value, stream: "bvp", device: device, time: sample.timestamp - origin)
  }

  func didReceiveGSR(_ sample: E4Sample, device manager: E4DeviceManager) {
    observer.sample(sample.value, stream: "eda", device: device, time: sample.timestamp - origin)
  }

  func didReceiveTemperature(_ sample: E4Sample, device manager: E4DeviceManager) {
    observer.sample(sample.value, stream: "temperature", device: device, time: sample.timestamp - origin)
  }

  func didReceiveAcceleration(_ sample: E4Acceleration, device manager: E4DeviceManager) {
    let g = sample.g
    let time = sample.timestamp - origin
    observer.samples([(g.x, "acc.x", time), (g.y, "acc.y", time), (g.z, "acc.z", time)], device: device)
  }

  func didReceiveIBI(_ sample: E4Sample, device manager: E4DeviceManager) {
    observer.event("ibi", device: device)
    let heartRate = recentIntervals.withLock { recent in
      recent.append(sample.value)
      if recent.count > 10 { recent.removeFirst() }
      return 60 * Double(recent.count) / recent.reduce(0, +)
    }
    observer.metric("heart-rate", heartRate, device: device)
  }

  func didReceiveBatteryLevel(_ sample: E4Sample, device manager: E4DeviceManager) {
    observer.event("battery", device: device, detail: String(format: "%.0f %%", sample.value * 100))
    observer.metric("battery", sample.value, device: device)
  }

  func didReceiveTag(_ tag: E4Tag, device manager: E4DeviceManager) {
    observer.event("tag", device: device, detail: String(format: "at %.3f s", tag.timestamp - origin))
  }
}
