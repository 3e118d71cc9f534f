/// Why a connection ended, from the point of view of the side that reports it.
public enum DisconnectReason: Hashable, Sendable, Codable, CustomStringConvertible {
  /// The other side ended the connection (the peripheral, as a central sees it;
  /// the central, as a peripheral sees it).
  case remote
  /// The link was lost: supervision timeout, out of range, radio gone.
  case linkLoss
  /// This side ended the connection.
  case local
  /// The transport gave a reason Doppel does not classify (its text).
  case other(String)

  public var description: String {
    switch self {
    case .remote: "disconnected by the remote side"
    case .linkLoss: "link lost"
    case .local: "disconnected locally"
    case .other(let text): "disconnected: \(text)"
    }
  }
}
