/// The Engine.IO protocol revision a connection speaks, from its `EIO` query
/// parameter. On the WebSocket transport, revisions 2 and 3 are the same: the
/// client pings (`2`) and the server answers (`3`), and Socket.IO connects the
/// main namespace by itself. Revision 4 turns the heartbeat round (the server
/// pings) and has the client ask for the namespace (`40`).
public enum EngineIOVersion: Int, Hashable, Sendable, CaseIterable {
  /// What the Kardia app's Socket.IO client (Socket.IO-Client-Swift of early 2015) sent.
  case two = 2
  /// Socket.IO 1.x and 2.x (the Kardia node server ran socket.io 1.2); python-socketio 4.
  case three = 3
  /// Socket.IO 3.x and later; python-socketio 5.
  case four = 4

  /// Whether the server sends the pings.
  var serverPings: Bool { self == .four }
}
