import ActiGraphLink
import ActiGraphLinkSDK
import Foundation
import GATT
import Loopback
import Synchronization
import Testing

/// An ActiGraph Link and the SDK on the loopback in virtual time, with every
/// SDK message recorded.
final class ActiGraphRig: Sendable {
  let clock = VirtualClock(settleLimit: .milliseconds(500))
  let air: LoopbackAir
  let sdk: AGDeviceSDK
  private let received = MessageLog()
  private let collector: Task<Void, Never>

  init(mtu: Int = 185) throws {
    air = LoopbackAir(clock: clock)
    let sdk = AGDeviceSDK(link: try air.makeCentral(preferredMTU: mtu), clock: clock)
    self.sdk = sdk
    let received = self.received
    collector = Task {
      for await message in sdk.messages { received.items.withLock { $0.append(message) } }
    }
  }

  deinit { collector.cancel() }

  var messages: [AGMessage] { received.items.withLock { $0 } }

  /// The messages once the SDK's tasks have settled.
  func current() async -> [AGMessage] {
    await clock.advance(by: .zero)
    return messages
  }

  /// Messages from `index` on, once settled.
  func current(from index: Int) async -> [AGMessage] { Array(await current().dropFirst(index)) }

  /// Messages from `index` on.
  func messages(from index: Int) -> [AGMessage] { Array(messages.dropFirst(index)) }

  /// Advances virtual time in steps until `condition` holds for the
  /// messages, or `limit` has passed; returns the messages.
  @discardableResult
  func wait(
    upTo limit: Duration = .seconds(120), step: Duration = .milliseconds(100),
    until condition: ([AGMessage]) -> Bool
  ) async -> [AGMessage] {
    var waited = Duration.zero
    while !condition(messages), waited < limit {
      await clock.advance(by: step)
      waited += step
    }
    return messages
  }

  /// Hosts `model` and scans for 1 s.
  func hostAndScan(_ model: ActiGraphLink, mtu: Int = 185) async throws {
    try await air.host(model, preferredMTU: mtu)
    await sdk.enumerateDevices(1)
    await wait { $0.contains { if case .devices = $0.value { true } else { false } } }
  }

  /// Hosts, scans and connects to `model`.
  func connect(_ model: ActiGraphLink, mtu: Int = 185) async throws {
    try await hostAndScan(model, mtu: mtu)
    await sdk.connectToDevice(model.configuration.serialNumber)
    let connected = await wait { $0.contains { if case .deviceConnected = $0.value { true } else { false } } }
    try #require(connected.contains { if case .deviceConnected = $0.value { true } else { false } })
  }

  /// The JSON of a message, parsed.
  static func parsed(_ json: String) -> NSDictionary? {
    (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? NSDictionary
  }

  /// Whether `message`'s JSON equals `expected` as parsed JSON.
  static func matches(_ message: AGMessage, _ expected: String) -> Bool {
    guard let actual = parsed(message.json), let wanted = parsed(expected) else { return false }
    return actual.isEqual(wanted)
  }

  static func errorCode(_ message: AGMessage) -> Int? {
    if case .error(let error) = message.value { return error.code.rawValue }
    return nil
  }
}

/// The messages an SDK delivered.
final class MessageLog: Sendable {
  let items = Mutex<[AGMessage]>([])
}
