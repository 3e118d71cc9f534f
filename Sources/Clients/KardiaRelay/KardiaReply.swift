/// One event the Kardia server sent, as the relay reads it.
public enum KardiaReply: Hashable, Sendable {
  /// `node.js` with `{"heartRate": …, "statusCode": …}`.
  case analysis(KardiaAnalysis)
  /// `/error` with `{"error": "…"}`: the server refused what the relay sent, and says why.
  case error(String)
  /// Anything else (kept as it arrived: reported, never dropped).
  case unreadable(String)
}
