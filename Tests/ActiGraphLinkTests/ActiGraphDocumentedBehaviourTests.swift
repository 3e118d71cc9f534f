import ActiGraphLink
import ActiGraphLinkSDK
import Foundation
import GATT
import Loopback
import Synchronization
import Testing

/// The SDK's delegate, recording each call with the virtual time it came at.
final class RecordingAGDelegate: AGDeviceSDKDelegate {
  enum Call: Hashable {
    case data(String)
    case status(String)
  }

  private let clock: VirtualClock
  private let log = Mutex<[(call: Call, at: Duration)]>([])

  init(clock: VirtualClock) { self.clock = clock }

  var calls: [Call] { log.withLock { $0.map(\.call) } }
  var timedCalls: [(call: Call, at: Duration)] { log.withLock { $0 } }
  /// The JSON of every call, parsed.
  var objects: [NSDictionary] {
    calls.compactMap {
      switch $0 {
      case .data(let json), .status(let json): ActiGraphRig.parsed(json)
      }
    }
  }

  func onDeviceData(_ data: String) {
    let now = clock.now.offset
    log.withLock { $0.append((.data(data), now)) }
  }

  func onDeviceStatus(_ status: String) {
    let now = clock.now.offset
    log.withLock { $0.append((.status(status), now)) }
  }
}

/// What the SDK's document says, call by call: the delegate, when each
/// answer comes, and the error codes in the situations it names.
@Suite(.timeLimit(.minutes(2)))
struct ActiGraphDocumentedBehaviourTests {
  static let serial = "TAS1A14758923"

  /// An SDK made with `init(delegate:link:clock:)`, on the rig's air.
  private func sdk(_ rig: ActiGraphRig, delegate: RecordingAGDelegate) throws -> AGDeviceSDK {
    AGDeviceSDK(delegate: delegate, link: try rig.air.makeCentral(), clock: rig.clock)
  }

  private static func key(_ object: NSDictionary) -> String { (object.allKeys.first as? String) ?? "" }

  @Test func theDelegateGetsEveryMessageAsJSONStatusApart() async throws {
    let rig = try ActiGraphRig()
    let delegate = RecordingAGDelegate(clock: rig.clock)
    let sdk = try sdk(rig, delegate: delegate)
    let model = ActiGraphLink()
    try await rig.air.host(model)
    await sdk.enumerateDevices(1)
    await rig.clock.advance(by: .seconds(1))
    await sdk.connectToDevice(Self.serial)
    await sdk.getDeviceStatus()
    await rig.clock.advance(by: .milliseconds(100))
    await sdk.configureDevice(#"{"raw": {"stream": true}}"#)
    await rig.clock.advance(by: .milliseconds(200))
    await sdk.configureDevice(#"{"raw": {"stream": false}}"#)
    await rig.clock.advance(by: .milliseconds(100))
    await sdk.disconnectFromDevice()
    let objects = delegate.objects
    let keys = objects.map(Self.key)
    // In order: found, the list, connected, status, the raw answer, raw batches, the raw answer, disconnected.
    #expect(Array(keys.prefix(4)) == ["device", "devices", "deviceConnected", "status"])
    #expect(keys.last == "deviceDisconnected")
    #expect(objects[0].isEqual(to: ["device": Self.serial]))
    #expect(objects[1].isEqual(to: ["devices": [Self.serial]]))
    #expect(objects[2].isEqual(to: ["deviceConnected": Self.serial]))
    let raw = objects.compactMap { $0["raw"] as? NSDictionary }
    #expect(raw.first?.isEqual(to: ["stream": true]) == true)
    #expect(raw.filter { $0["acceleration"] != nil }.count >= 2, "raw data comes again and again while streaming")
    #expect(raw.last?.isEqual(to: ["stream": false]) == true)
    // Only the status goes to onDeviceStatus.
    let statuses = delegate.calls.filter { if case .status = $0 { true } else { false } }
    #expect(statuses.count == 1)
    if case .status(let json) = statuses.first { #expect(ActiGraphRig.parsed(json)?["status"] != nil) }
    // The same messages, in the same order, as the typed stream.
    await sdk.finish()
    var streamed: [String] = []
    for await message in sdk.messages { streamed.append(message.json) }
    let told = delegate.calls.map { call -> String in
      switch call {
      case .data(let json), .status(let json): json
      }
    }
    #expect(told == streamed)
    await rig.air.removeAll()
  }

  @Test func theDelegateIsWeakAndCanBeHandedOver() async throws {
    let rig = try ActiGraphRig()
    var first: RecordingAGDelegate? = RecordingAGDelegate(clock: rig.clock)
    let sdk = try sdk(rig, delegate: first!)
    #expect(sdk.delegate === first)
    let second = RecordingAGDelegate(clock: rig.clock)
    sdk.delegate = second
    await sdk.getDeviceStatus()
    #expect(first?.calls.isEmpty == true)
    #expect(second.objects.map(Self.key) == ["error"])
    weak let released = first
    first = nil
    sdk.delegate = released
    #expect(sdk.delegate == nil)
    await sdk.getDeviceStatus()
  }

  @Test func enumerateDevicesScansTenSecondsOrTheDurationGiven() async throws {
    let rig = try ActiGraphRig()
    let delegate = RecordingAGDelegate(clock: rig.clock)
    let sdk = try sdk(rig, delegate: delegate)
    try await rig.air.host(ActiGraphLink())
    await sdk.enumerateDevices()
    await rig.clock.advance(by: .milliseconds(9900))
    #expect(delegate.objects.map(Self.key) == ["device"], "found during the scan, the list not yet")
    await rig.clock.advance(by: .milliseconds(100))
    #expect(delegate.objects.map(Self.key) == ["device", "devices"])
    #expect(delegate.timedCalls.last?.at == .seconds(10))
    await sdk.enumerateDevices(15)
    await rig.clock.advance(by: .seconds(15))
    #expect(delegate.timedCalls.last?.at == .seconds(25))
    #expect(delegate.objects.last?.isEqual(to: ["devices": [Self.serial]]) == true)
    await rig.air.removeAll()
  }

  @Test func disconnectingWithNothingConnectedDoesNothing() async throws {
    let rig = try ActiGraphRig()
    let delegate = RecordingAGDelegate(clock: rig.clock)
    let sdk = try sdk(rig, delegate: delegate)
    await sdk.disconnectFromDevice()
    await rig.clock.advance(by: .seconds(1))
    #expect(delegate.calls.isEmpty)
    #expect(await sdk.getConnectedDevice() == nil)
    // And after a disconnection, a second one does nothing either.
    try await rig.connect(ActiGraphLink())
    await rig.sdk.disconnectFromDevice()
    // The rig's collector, a task off the virtual clock, may take a message
    // after `current()` has settled the clock: the first disconnection's is
    // waited for, and after the second, a second of virtual time is left
    // for anything it might wrongly emit.
    func disconnected(_ message: AGMessage) -> Bool {
      if case .deviceDisconnected = message.value { true } else { false }
    }
    let messages = await rig.wait { $0.contains(where: disconnected) }
    try #require(messages.contains(where: disconnected))
    await rig.sdk.disconnectFromDevice()
    #expect(await rig.wait(upTo: .seconds(1)) { $0.count > messages.count }.count == messages.count)
    await rig.air.removeAll()
  }

  @Test func aDeviceWithSDKAccessDisabledIsCode4ForEveryRequest() async throws {
    let rig = try ActiGraphRig()
    let model = ActiGraphLink(configuration: .init(sdkAccessDisabled: true))
    try await rig.connect(model)
    let start = await rig.current().count
    await rig.sdk.getDeviceStatus()
    await rig.sdk.configureDevice(#"{"raw": {"stream": true}}"#)
    let messages = await rig.wait { $0.dropFirst(start).compactMap(ActiGraphRig.errorCode).count == 2 }
    let errors = Array(messages.dropFirst(start))
    #expect(errors.compactMap(ActiGraphRig.errorCode) == [4, 4])
    #expect(
      (ActiGraphRig.parsed(errors[0].json)?["error"] as? NSDictionary)?["description"] as? String
        == "SDK Access Disabled")
    #expect(errors.allSatisfy { !$0.isStatus })
    #expect(await !model.isStreamingRaw)
    // Switched on again, the same requests are answered.
    await model.disableSDKAccess(false)
    await rig.sdk.getDeviceStatus()
    let after = await rig.wait { $0.contains(where: \.isStatus) }
    #expect(after.contains { $0.isStatus })
    await rig.air.removeAll()
  }

  @Test func aSecondConnectionIsCode10WithItsWholeDescription() async throws {
    let rig = try ActiGraphRig()
    try await rig.connect(ActiGraphLink())
    await rig.sdk.connectToDevice(Self.serial)
    let last = try #require(await rig.current().last)
    #expect(ActiGraphRig.errorCode(last) == 10)
    #expect(
      (ActiGraphRig.parsed(last.json)?["error"] as? NSDictionary)?["description"] as? String
        == "Existing Connection Found (Device Already Connected)")
    #expect(AGErrorCode.allCases.map(\.rawValue) == Array(0...11))
    await rig.air.removeAll()
  }
}
