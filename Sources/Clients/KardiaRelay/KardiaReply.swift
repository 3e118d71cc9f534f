/// One text frame the Kardia server sent, as the relay reads it.
public enum KardiaReply: Hashable, Sendable {
  /// `{"heartRate": …, "statusCode": …}`.
  case analysis(KardiaAnalysis)
  /// `{"error": "…"}`: the server refused the event the relay sent, and says why.
  case error(String)
  /// A frame that is neither (kept as it arrived: reported, never dropped).
  case unreadable(String)
}
