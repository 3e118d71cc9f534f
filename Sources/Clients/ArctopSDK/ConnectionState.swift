/// The sensor device's connection, as `onConnectionChanged(previous:current:)` reports it.
public enum ConnectionState: Int, Sendable, CaseIterable {
  case unknown, connecting, connected, connectionFailed, disconnected, disconnectedUponRequest
}
