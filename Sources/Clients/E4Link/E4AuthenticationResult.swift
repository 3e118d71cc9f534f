/// The outcome of authenticating an API key: whether it succeeded, and why
/// not (the SDK's completion handler arguments).
public struct E4AuthenticationResult: Hashable, Sendable {
  public var success: Bool
  public var description: String

  public init(success: Bool, description: String) {
    self.success = success
    self.description = description
  }
}
