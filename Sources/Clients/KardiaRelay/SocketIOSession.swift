/// What the analysis server does with one Socket.IO connection over WebSocket,
/// without the network: the Engine.IO handshake and heartbeat, Socket.IO
/// framing, and the Kardia app's events. Each input (a frame, or time passing)
/// gives the frames to send and, when the session is over, how to close it.
///
/// - Engine.IO packets that cannot be read close the connection (1002, with
///   the reason), as an Engine.IO server does on a parse error.
/// - Socket.IO packets and events that cannot be taken are answered with an
///   `/error` event saying what was wrong; the connection stays up.
/// - A heartbeat missed closes the connection (1008 "ping timeout"): with
///   revisions 2 and 3 no client ping within `pingInterval + pingTimeout`, with
///   revision 4 no pong within `pingTimeout` of the server's ping.
struct SocketIOSession {
  /// How a session ends.
  struct Close: Hashable {
    var code: UInt16
    var reason: String

    static let normal: UInt16 = 1000
    static let protocolError: UInt16 = 1002
    static let policyViolation: UInt16 = 1008
  }

  /// The answer to one input.
  struct Reaction: Hashable {
    /// Text frames to send, in order.
    var frames: [String] = []
    /// Set when the session is over: send a close frame with this, then close.
    var close: Close?
  }

  let version: EngineIOVersion
  let sid: String
  let pingInterval: Duration
  let pingTimeout: Duration
  private var analysis: KardiaAnalysisSession
  /// Whether the client is connected to the main namespace.
  private var connected = false
  /// Binary frames still to come for a binary packet that was refused.
  private var pendingAttachments = 0
  /// Revision 4: when to ping next, and the pong deadline while one is awaited.
  private var nextPing: ContinuousClock.Instant
  private var pongDeadline: ContinuousClock.Instant?
  /// Revisions 2 and 3: when the client must have pinged by.
  private var pingDeadline: ContinuousClock.Instant
  private(set) var isClosed = false
  /// Told of each `/BLEDisconnect` the session takes.
  private let heardBLEDisconnect: @Sendable () -> Void

  init(
    version: EngineIOVersion, sid: String, pingInterval: Duration, pingTimeout: Duration,
    analysis: KardiaAnalysisSession, now: ContinuousClock.Instant,
    heardBLEDisconnect: @escaping @Sendable () -> Void = {}
  ) {
    self.heardBLEDisconnect = heardBLEDisconnect
    self.version = version
    self.sid = sid
    self.pingInterval = pingInterval
    self.pingTimeout = pingTimeout
    self.analysis = analysis
    nextPing = now + pingInterval
    pingDeadline = now + pingInterval + pingTimeout
  }

  /// The frames that open the session: the Engine.IO open packet, and with
  /// revisions 2 and 3 the main namespace's connect (the server connects it by itself).
  mutating func open() -> [String] {
    let handshake = JSONValue.object([
      "sid": .string(sid), "upgrades": .array([]),
      "pingInterval": .number(Double(pingInterval.milliseconds)),
      "pingTimeout": .number(Double(pingTimeout.milliseconds)),
      "maxPayload": .number(Double(KardiaAnalysisServer.maxFrameSize)),
    ])
    var frames = [EngineIOPacket.open(handshake.text).text]
    if !version.serverPings {
      connected = true
      frames.append(EngineIOPacket.message(SocketIOPacket(kind: .connect).text).text)
    }
    return frames
  }

  /// Time passed: the heartbeat.
  mutating func tick(now: ContinuousClock.Instant) -> Reaction {
    guard !isClosed else { return Reaction() }
    if version.serverPings {
      if let deadline = pongDeadline {
        if now >= deadline {
          return close(Close.policyViolation, "ping timeout: no pong within \(pingTimeout.milliseconds) ms of the ping")
        }
      } else if now >= nextPing {
        pongDeadline = now + pingTimeout
        return Reaction(frames: [EngineIOPacket.ping("").text])
      }
    } else if now >= pingDeadline {
      let limit = (pingInterval + pingTimeout).milliseconds
      return close(Close.policyViolation, "ping timeout: no ping within \(limit) ms (pingInterval + pingTimeout)")
    }
    return Reaction()
  }

  /// One text frame.
  mutating func receive(text: String, now: ContinuousClock.Instant) -> Reaction {
    guard !isClosed else { return Reaction() }
    let packet: EngineIOPacket
    do {
      packet = try EngineIOPacket(text: text)
    } catch {
      return close(Close.protocolError, error.description)
    }
    switch packet {
    case .ping(let data):
      pingDeadline = now + pingInterval + pingTimeout
      return Reaction(frames: [EngineIOPacket.pong(data).text])
    case .pong:
      if version.serverPings, pongDeadline != nil {
        pongDeadline = nil
        nextPing = now + pingInterval
      }
      return Reaction()
    case .close:
      return close(Close.normal, "the client closed the Engine.IO session")
    case .noop:
      return Reaction()
    case .open:
      return close(Close.protocolError, "a client does not send an Engine.IO open packet (0)")
    case .upgrade:
      return close(Close.protocolError, "nothing to upgrade: this session is on the WebSocket transport already")
    case .message(let data):
      return receive(socketIO: data)
    }
  }

  /// One binary frame: the Kardia app never sends any.
  mutating func receiveBinary() -> Reaction {
    guard !isClosed else { return Reaction() }
    if pendingAttachments > 0 {
      // Part of a binary packet already answered with an error.
      pendingAttachments -= 1
      return Reaction()
    }
    return reply(KardiaWire.failure("binary messages are not read: send events as text, as the Kardia app does"))
  }

  private mutating func receive(socketIO data: String) -> Reaction {
    if connected, data.first == "2", let arguments = KardiaWire.quickSample(data.dropFirst()) {
      return analysis.receive(arguments).map(reply) ?? Reaction()
    }
    let packet: SocketIOPacket
    do {
      packet = try SocketIOPacket(text: data)
    } catch {
      return reply(KardiaWire.failure(error.description))
    }
    guard packet.namespace == "/" else {
      return send(invalidNamespace(packet.namespace))
    }
    switch packet.kind {
    case .connect:
      connected = true
      let data: JSONValue? = version.serverPings ? .object(["sid": .string(sid)]) : nil
      return send(SocketIOPacket(kind: .connect, data: data))
    case .disconnect:
      return close(Close.normal, "the client left the namespace /")
    case .binaryEvent, .binaryAck:
      pendingAttachments = packet.attachments
      return reply(KardiaWire.failure("binary events are not read: the Kardia app's events are JSON text"))
    case .ack:
      return reply(
        KardiaWire.failure("unexpected ack \(packet.ackID.map(String.init) ?? ""): the server asks for none"))
    case .connectError:
      return reply(KardiaWire.failure("a client does not send CONNECT_ERROR (4)"))
    case .event:
      guard connected else {
        return reply(KardiaWire.failure("connect to the namespace / first (send 40), then emit"))
      }
      let event: (name: String, arguments: [JSONValue])
      do {
        event = try packet.event()
      } catch {
        return reply(KardiaWire.failure(error.description))
      }
      var reaction = Reaction()
      switch event.name {
      case KardiaWire.sampleEvent:
        if let answer = analysis.receive(event.arguments) { reaction = reply(answer) }
      case KardiaWire.disconnectEvent:
        analysis.bleDisconnected()
        heardBLEDisconnect()
      default:
        reaction = reply(
          KardiaWire.failure(
            "unknown event \"\(event.name)\": the Kardia server takes \"\(KardiaWire.sampleEvent)\" and "
              + "\"\(KardiaWire.disconnectEvent)\"", event: event.name))
      }
      if let id = packet.ackID {
        reaction.frames.append(
          EngineIOPacket.message(SocketIOPacket(kind: .ack, ackID: id, data: .array([])).text).text)
      }
      return reaction
    }
  }

  private func invalidNamespace(_ namespace: String) -> SocketIOPacket {
    let message = "Invalid namespace \(namespace): the Kardia server serves /"
    let data: JSONValue = version.serverPings ? .object(["message": .string(message)]) : .string(message)
    return SocketIOPacket(kind: .connectError, namespace: namespace, data: data)
  }

  private func reply(_ packet: SocketIOPacket) -> Reaction {
    send(packet)
  }

  private func send(_ packet: SocketIOPacket) -> Reaction {
    Reaction(frames: [EngineIOPacket.message(packet.text).text])
  }

  private mutating func close(_ code: UInt16, _ reason: String) -> Reaction {
    isClosed = true
    return Reaction(close: Close(code: code, reason: reason))
  }
}

extension Duration {
  /// Whole milliseconds.
  var milliseconds: Int64 {
    let (seconds, attoseconds) = components
    return seconds * 1000 + attoseconds / 1_000_000_000_000_000
  }
}
