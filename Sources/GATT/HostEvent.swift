/// Something that happened to the stack hosting a device, not on a link:
/// the Bluetooth daemon went away, or came back and the device was
/// registered with it again. Scenario runs report these beside what the
/// centrals did, so an outage reads as an outage, not as a stray failure.
public enum HostEvent: Hashable, Sendable, CustomStringConvertible {
  /// The stack went away (bluetoothd left the bus): every link is gone.
  case stackLost
  /// The stack is back and the device is registered and advertising again,
  /// `after` the loss.
  case registeredAgain(after: Duration)
  /// The stack is back but registering the device again failed (the reason).
  case registrationFailed(String)

  public var description: String {
    switch self {
    case .stackLost: "bluetoothd went away"
    case .registeredAgain(let after):
      "bluetoothd is back: registered again \((after.seconds * 10).rounded() / 10) s after the loss"
    case .registrationFailed(let reason): "bluetoothd is back, but registering again failed: \(reason)"
    }
  }
}
