/// What can go wrong between the relay and the analysis server.
public enum KardiaError: Error, Hashable, Sendable {
  /// The server answered the WebSocket upgrade with this HTTP status instead of 101
  /// (404 for a path other than the server's, 426 for a plain request to it).
  case upgradeRefused(status: Int)
  /// Connecting and upgrading to a WebSocket took longer than allowed.
  case timedOut
  /// The WebSocket connection is closed (or closing): nothing more can be sent.
  case closed
  /// `run()` was called on a server that has already run.
  case alreadyRun
  /// The server stopped (or failed) before it was listening.
  case notListening
}
