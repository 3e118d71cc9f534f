import E4
import E4Link
import GATT
import Loopback
import Signals
import Testing

/// An E4 and the SDK-shaped client on the loopback, in virtual time, with
/// the client's wall clock at `epoch` + virtual time.
struct E4Rig {
  static let epoch = 1_700_000_000.0
  /// A woken task that takes long to sleep again (a loaded machine) still
  /// finishes before time moves on.
  let clock = VirtualClock(settleLimit: .milliseconds(500))
  let air: LoopbackAir

  init() { air = LoopbackAir(clock: clock) }

  /// Unix time now, as the client's wall clock reads it.
  var unixTime: @Sendable () -> Double {
    let clock = self.clock
    return { E4Rig.epoch + (clock.now.offset).seconds }
  }

  func api(_ authenticator: any E4Authenticator = E4LocalVerifier.acceptingAnyKey) throws -> EmpaticaAPI {
    EmpaticaAPI(link: try air.makeCentral(), authenticator: authenticator, clock: clock, unixTime: unixTime)
  }

  /// Authenticates, discovers, and returns the manager of the first wristband found.
  func firstDevice(_ api: EmpaticaAPI, apiKey: String = "key") async throws -> E4DeviceManager {
    await api.authenticate(apiKey: apiKey)
    for await event in try await api.discoverDevices(duration: .seconds(2)) {
      if case .found(let first) = event { return first }
    }
    throw E4LinkError(.notConnected, "no wristband found")
  }

  /// Hosts `model` and returns a manager for it, not yet connected.
  func host(_ model: E4) async throws -> E4DeviceManager {
    try await air.host(model)
    return try await firstDevice(try api())
  }

  /// Collects a stream until it finishes.
  static func collect<T: Sendable>(_ stream: AsyncStream<T>) -> Task<[T], Never> {
    Task {
      var values: [T] = []
      for await value in stream { values.append(value) }
      return values
    }
  }
}
