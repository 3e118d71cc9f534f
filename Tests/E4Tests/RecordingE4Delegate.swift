import E4Link
import Loopback
import Synchronization

/// Both SDK delegates, recording every call in order with the virtual time it came at.
final class RecordingE4Delegate: EmpaticaDelegate, EmpaticaDeviceDelegate {
  /// One delegate call.
  enum Call: Hashable, Sendable {
    case bleStatus(BLEStatus)
    /// `didDiscoverDevices:` with the names of the devices.
    case devices([String?])
    case deviceStatus(E4DeviceStatus)
    case bvp(Float, Double)
    case gsr(Float, Double)
    case temperature(Float, Double)
    case ibi(Float, Double)
    case acceleration(Int8, Int8, Int8, Double)
    case battery(Float, Double)
    case tag(Double)
  }

  private let clock: VirtualClock?
  private let log = Mutex<[(call: Call, at: Duration)]>([])

  init(clock: VirtualClock? = nil) { self.clock = clock }

  var calls: [Call] { log.withLock { $0.map(\.call) } }
  var timedCalls: [(call: Call, at: Duration)] { log.withLock { $0 } }
  var deviceStatuses: [E4DeviceStatus] {
    calls.compactMap { if case .deviceStatus(let status) = $0 { status } else { nil } }
  }
  var bleStatuses: [BLEStatus] { calls.compactMap { if case .bleStatus(let status) = $0 { status } else { nil } } }
  var discoveries: [[String?]] { calls.compactMap { if case .devices(let names) = $0 { names } else { nil } } }
  var bvp: [E4Sample] {
    calls.compactMap {
      if case .bvp(let value, let time) = $0 { E4Sample(value: Double(value), timestamp: time) } else { nil }
    }
  }
  var acceleration: [E4Acceleration] {
    calls.compactMap {
      if case .acceleration(let x, let y, let z, let time) = $0 {
        E4Acceleration(x: x, y: y, z: z, timestamp: time)
      } else {
        nil
      }
    }
  }

  private func record(_ call: Call) {
    let now = clock?.now.offset ?? .zero
    log.withLock { $0.append((call, now)) }
  }

  func didUpdate(_ status: BLEStatus) { record(.bleStatus(status)) }
  func didDiscoverDevices(_ devices: [EmpaticaDeviceManager]) { record(.devices(devices.map(\.name))) }
  func didUpdate(_ status: DeviceStatus, forDevice device: EmpaticaDeviceManager) { record(.deviceStatus(status)) }
  func didReceiveTag(atTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager) {
    record(.tag(timestamp))
  }
  func didReceiveIBI(_ ibi: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager) {
    record(.ibi(ibi, timestamp))
  }
  func didReceiveGSR(_ gsr: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager) {
    record(.gsr(gsr, timestamp))
  }
  func didReceiveBVP(_ bvp: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager) {
    record(.bvp(bvp, timestamp))
  }
  func didReceiveTemperature(_ temp: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager) {
    record(.temperature(temp, timestamp))
  }
  func didReceiveAccelerationX(
    _ x: Int8, y: Int8, z: Int8, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager
  ) {
    record(.acceleration(x, y, z, timestamp))
  }
  func didReceiveBatteryLevel(_ level: Float, withTimestamp timestamp: Double, fromDevice device: EmpaticaDeviceManager)
  {
    record(.battery(level, timestamp))
  }
}
