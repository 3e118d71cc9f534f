import Foundation
import Testing

@testable import KardiaRelay

/// The Engine.IO and Socket.IO protocol of one connection, without a network,
/// on a clock the tests move by hand.
struct SocketIOSessionTests {
  static let start = ContinuousClock.now

  static func session(_ version: EngineIOVersion, interval: Int = 1) -> SocketIOSession {
    SocketIOSession(
      version: version, sid: "sid1", pingInterval: .seconds(25), pingTimeout: .seconds(20),
      analysis: KardiaAnalysisSession(window: .seconds(10), interval: interval), now: start)
  }

  static func at(_ seconds: Double) -> ContinuousClock.Instant { start + .seconds(seconds) }

  static func sample(_ n: Int, amplitude: String = "0.5") -> String {
    KardiaWire.sample(amplitude: amplitude, time: ECGFeed.epoch + Double(n) / 100)
  }

  /// The `/error` message in a reaction's only frame.
  static func error(in reaction: SocketIOSession.Reaction) throws -> String {
    try #require(reaction.frames.count == 1, "\(reaction)")
    let packet = try SocketIOPacket(text: String(try #require(reaction.frames.first).dropFirst()))
    guard case .error(let message) = KardiaWire.reply(packet) else {
      Issue.record("not an error: \(reaction.frames)")
      return ""
    }
    #expect(reaction.close == nil)
    return message
  }

  @Test(arguments: [EngineIOVersion.two, .three])
  func revisions2And3OpenWithTheHandshakeAndConnectTheMainNamespace(version: EngineIOVersion) throws {
    var session = Self.session(version)
    let frames = session.open()
    #expect(frames.count == 2)
    #expect(frames.first?.hasPrefix("0{") == true)
    let handshake = JSONValue.parse(try #require(frames.first).dropFirst())
    #expect(
      handshake
        == .object([
          "sid": .string("sid1"), "upgrades": .array([]), "pingInterval": .number(25000),
          "pingTimeout": .number(20000), "maxPayload": .number(65536),
        ]))
    #expect(frames.last == "40")
    // Events go straight on: the app never sent 40.
    let reply = session.receive(text: Self.sample(0), now: Self.at(1))
    #expect(reply.frames == [#"42["node.js",{"heartRate":"- -","statusCode":"0","time":"2025-06-15T15:06:40.000Z"}]"#])
  }

  @Test func revision4WaitsForTheClientToConnectAndAnswersWithTheSid() throws {
    var session = Self.session(.four)
    #expect(session.open().count == 1)
    let early = try Self.error(in: session.receive(text: Self.sample(0), now: Self.at(1)))
    #expect(early.contains("connect to the namespace / first"))
    #expect(session.receive(text: "40", now: Self.at(1)).frames == [#"40{"sid":"sid1"}"#])
    #expect(session.receive(text: Self.sample(0), now: Self.at(1)).frames.first?.hasPrefix(#"42["node.js""#) == true)
    // Another namespace is refused, as Socket.IO refuses one it does not serve.
    let other = session.receive(text: "40/admin,", now: Self.at(1))
    #expect(other.frames == [#"44/admin,{"message":"Invalid namespace /admin: the Kardia server serves /"}"#])
  }

  @Test func revision3ClientPingsAreAnsweredAndTheirAbsenceClosesTheSession() {
    var session = Self.session(.three)
    _ = session.open()
    #expect(session.receive(text: "2", now: Self.at(25)).frames == ["3"])
    #expect(session.receive(text: "2probe", now: Self.at(30)).frames == ["3probe"])
    // 45 s (pingInterval + pingTimeout) after the last ping, and not before.
    #expect(session.tick(now: Self.at(74.9)) == .init())
    let closed = session.tick(now: Self.at(75))
    #expect(closed.close?.code == 1008)
    #expect(closed.close?.reason.contains("ping timeout") == true)
    #expect(session.isClosed)
    #expect(session.receive(text: "2", now: Self.at(76)) == .init())
  }

  @Test func revision4ServerPingsAndAMissingPongClosesTheSession() {
    var session = Self.session(.four)
    _ = session.open()
    #expect(session.tick(now: Self.at(24)) == .init())
    #expect(session.tick(now: Self.at(25)).frames == ["2"])
    #expect(session.tick(now: Self.at(30)) == .init())  // one ping until the pong
    #expect(session.receive(text: "3", now: Self.at(31)) == .init())
    #expect(session.tick(now: Self.at(55)) == .init())
    #expect(session.tick(now: Self.at(56)).frames == ["2"])
    #expect(session.tick(now: Self.at(75.9)) == .init())
    let closed = session.tick(now: Self.at(76))
    #expect(closed.close == .init(code: 1008, reason: "ping timeout: no pong within 20000 ms of the ping"))
  }

  @Test(arguments: ["", "x", "9", "{\"amplitude\":1}", "[\"message\"]"])
  func textThatIsNotEngineIOClosesTheSessionWithTheReason(text: String) {
    var session = Self.session(.three)
    _ = session.open()
    let reaction = session.receive(text: text, now: Self.at(1))
    #expect(reaction.frames.isEmpty)
    #expect(reaction.close?.code == 1002)
    #expect(
      reaction.close?.reason.contains(text.isEmpty ? "empty Engine.IO packet" : "not an Engine.IO packet") == true)
  }

  @Test func engineIOPacketsAClientDoesNotSendCloseTheSession() {
    for text in ["0{}", "5"] {
      var session = Self.session(.four)
      _ = session.open()
      #expect(session.receive(text: text, now: Self.at(1)).close?.code == 1002, "\(text)")
    }
    var session = Self.session(.four)
    _ = session.open()
    #expect(session.receive(text: "6", now: Self.at(1)) == .init())
    #expect(session.receive(text: "1", now: Self.at(1)).close?.code == 1000)
    var leaving = Self.session(.three)
    _ = leaving.open()
    #expect(leaving.receive(text: "41", now: Self.at(1)).close?.code == 1000)
  }

  @Test(arguments: [
    ("4", "empty Socket.IO packet"),
    ("4x", "not a Socket.IO packet type"),
    ("42[\"message\",", "is not JSON"),
    ("42{\"amplitude\":\"1\"}", "must be an array"),
    ("42[]", "must start with its name"),
    ("42[7]", "must start with its name"),
    ("43[]", "unexpected ack"),
    ("44\"no\"", "CONNECT_ERROR"),
    ("45[\"message\"]", "attachment count"),
    ("451-[\"message\",{\"_placeholder\":true,\"num\":0}]", "binary events are not read"),
    ("42[\"hello\",1]", "unknown event \"hello\""),
    ("42[\"message\"]", "got no arguments"),
    ("42[\"message\",\"0.5\"]", "got a string"),
    ("42[\"message\",{}]", "missing keys \"amplitude\" and \"time\""),
    ("42[\"message\",{\"amplitude\":\"0.5\"}]", "missing key \"time\""),
    (
      "42[\"message\",{\"amplitude\":\"high\",\"time\":\"2025-06-15T15:06:40Z\"}]",
      "\"amplitude\" \"high\" is not a decimal"
    ),
    ("42[\"message\",{\"amplitude\":true,\"time\":\"2025-06-15T15:06:40Z\"}]", "must be the board's text"),
    ("42[\"message\",{\"amplitude\":\"1\",\"time\":42}]", "\"time\" must be an ISO 8601 string"),
    ("42[\"message\",{\"amplitude\":\"1\",\"time\":\"yesterday\"}]", "bad \"time\" \"yesterday\""),
    ("42[\"message\",{\"amplitude\":\"1\",\"time\":\"2025-06-15T15:06:40\"}]", "with a time zone"),
  ])
  func badSocketIOPacketsAndEventsGetAnErrorEventAndTheSessionGoesOn(text: String, saying: String) throws {
    var session = Self.session(.three)
    _ = session.open()
    let message = try Self.error(in: session.receive(text: text, now: Self.at(1)))
    #expect(message.contains(saying), "\(text): \(message)")
    #expect(session.receive(text: Self.sample(0), now: Self.at(1)).frames.first?.contains("node.js") == true)
  }

  @Test func binaryFramesGetAnErrorAndAttachmentsOfARefusedEventNone() throws {
    var session = Self.session(.three)
    _ = session.open()
    #expect(try Self.error(in: session.receiveBinary()).contains("binary messages are not read"))
    _ = session.receive(text: "452-[\"message\",{\"_placeholder\":true,\"num\":0}]", now: Self.at(1))
    #expect(session.receiveBinary() == .init())
    #expect(session.receiveBinary() == .init())
    #expect(session.receiveBinary().frames.count == 1)
  }

  @Test func amplitudesAreTheBoardsTextOrNumbersAndTimesMustGoForward() throws {
    var session = Self.session(.three)
    _ = session.open()
    #expect(session.receive(text: Self.sample(0, amplitude: " 0.81\r\n"), now: Self.at(1)).frames.count == 1)
    let number = #"42["message",{"amplitude":0.5,"time":"2025-06-15T15:06:40.010Z"}]"#
    #expect(session.receive(text: number, now: Self.at(1)).frames.first?.contains("node.js") == true)
    let back = try Self.error(in: session.receive(text: Self.sample(0), now: Self.at(1)))
    #expect(back.contains("before the previous sample"))
  }

  @Test func bleDisconnectStartsTheWindowOverAndAnAckIDIsAcknowledged() throws {
    var session = Self.session(.three, interval: 1)
    _ = session.open()
    for n in 0..<5 { _ = session.receive(text: Self.sample(100 + n), now: Self.at(1)) }
    // The board's clock may start over after a reconnect: not refused once the server knows.
    #expect(try Self.error(in: session.receive(text: Self.sample(0), now: Self.at(1))).contains("before"))
    #expect(session.receive(text: #"42["/BLEDisconnect"]"#, now: Self.at(1)) == .init())
    #expect(session.receive(text: Self.sample(0), now: Self.at(1)).frames.first?.contains("node.js") == true)
    let acked = session.receive(text: #"427["/BLEDisconnect"]"#, now: Self.at(1))
    #expect(acked.frames == ["437[]"])
  }

  @Test func packetsReadAndWriteAsSocketIOFramesThem() throws {
    let packet = try SocketIOPacket(text: #"2/chat,12["message",{"a":1}]"#)
    #expect(packet.kind == .event && packet.namespace == "/chat" && packet.ackID == 12)
    #expect(packet.text == #"2/chat,12["message",{"a":1}]"#)
    let binary = try SocketIOPacket(text: #"51-["up",{"_placeholder":true,"num":0}]"#)
    #expect(binary.attachments == 1 && binary.text == #"51-["up",{"_placeholder":true,"num":0}]"#)
    #expect(try SocketIOPacket(text: "0").text == "0")
    #expect(try EngineIOPacket(text: "4hello") == .message("hello"))
    #expect(EngineIOPacket.pong("probe").text == "3probe")
  }
}
