/// Decides whether an API key is valid. The real SDK asks Empatica's
/// server; a test or scenario supplies a local decision (`E4LocalVerifier`).
public protocol E4Authenticator: Sendable {
  func verify(apiKey: String) async -> E4AuthenticationResult
}
