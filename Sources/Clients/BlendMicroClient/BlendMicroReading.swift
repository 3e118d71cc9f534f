/// What the client makes of one notification from UART TX.
public enum BlendMicroReading: Hashable, Sendable {
  /// A decimal number: a sample.
  case sample(ECGSample)
  /// Bytes that are not a decimal number (reported, never dropped).
  case malformed(bytes: [UInt8], time: Duration)
}
