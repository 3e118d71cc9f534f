/// An authenticator that decides locally, so a scenario controls the outcome.
public struct E4LocalVerifier: E4Authenticator, Hashable {
  /// Keys accepted; `nil` accepts any non-empty key.
  public var validKeys: Set<String>?
  /// Why a key that is not valid is refused.
  public var refusal: String

  public init(validKeys: Set<String>?, refusal: String = "the API key is not valid") {
    self.validKeys = validKeys
    self.refusal = refusal
  }

  /// Accepts any non-empty key.
  public static let acceptingAnyKey = E4LocalVerifier(validKeys: nil)

  /// Refuses every key with `reason`.
  public static func refusingEveryKey(_ reason: String = "the API key is not valid") -> E4LocalVerifier {
    E4LocalVerifier(validKeys: [], refusal: reason)
  }

  public func verify(apiKey: String) async -> E4AuthenticationResult {
    guard !apiKey.isEmpty else { return E4AuthenticationResult(success: false, description: "no API key given") }
    if let validKeys, !validKeys.contains(apiKey) {
      return E4AuthenticationResult(success: false, description: refusal)
    }
    return E4AuthenticationResult(success: true, description: "authenticated")
  }
}
