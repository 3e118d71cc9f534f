extension KardiaAnalysisServer {
  /// What the server would send on one connection that received `frames`, in
  /// order, without a network or a clock: the opening frames, the answer to
  /// each frame, and the close (code and reason) if the session ended. A
  /// frame is text, or `nil` for a binary one. For fuzzing and for checking
  /// a recorded exchange.
  public nonisolated static func replay(
    _ frames: [String?], version: EngineIOVersion, configuration: Configuration = Configuration()
  ) -> (sent: [String], close: (code: UInt16, reason: String)?) {
    let now = ContinuousClock.now
    var session = SocketIOSession(
      version: version, sid: "replay", pingInterval: configuration.pingInterval,
      pingTimeout: configuration.pingTimeout,
      analysis: KardiaAnalysisSession(window: configuration.window, interval: configuration.analysisInterval),
      now: now)
    var sent = session.open()
    for frame in frames {
      let reaction = frame.map { session.receive(text: $0, now: now) } ?? session.receiveBinary()
      sent += reaction.frames
      if let close = reaction.close { return (sent, (close.code, close.reason)) }
    }
    return (sent, nil)
  }
}
