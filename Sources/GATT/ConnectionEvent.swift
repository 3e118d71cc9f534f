/// Something that happened to a connection, as `CentralConnection.events()` reports it.
public enum ConnectionEvent: Hashable, Sendable {
  /// The ATT MTU changed (e.g. after an MTU exchange).
  case mtuChanged(Int)
  /// The connection ended; always the last event.
  case disconnected(DisconnectReason)
}
