/// The rules every host enforces before it sends a notification or an
/// indication — the characteristic exists and has the property, someone is
/// subscribed, the value fits ATT_MTU − 3 — written once, so that BlueZ and
/// the loopback refuse the same things in the same words.
///
/// Hosts call these on every notification: each check is a lookup and a
/// comparison, and builds its message only when it fails.
public enum NotificationRule {
  /// The definition of the characteristic at `address` in `profile`, when it
  /// may send `kind` (`.notify` or `.indicate`); `notFound` or
  /// `notSupported` otherwise.
  public static func definition(
    in profile: GATTProfile, at address: CharacteristicAddress, sending kind: CharacteristicProperties
  ) throws(GATTError) -> CharacteristicDefinition {
    guard let definition = profile.characteristic(at: address) else {
      throw GATTError(.notFound, "no characteristic \(address) in the profile")
    }
    guard definition.properties.contains(kind) else {
      throw GATTError(
        .notSupported,
        "\(definition.name) (\(address)) cannot send \(describe(kind)); its properties are \(definition.properties)")
    }
    return definition
  }

  /// The error when no central is subscribed.
  public static func noSubscribers(_ definition: CharacteristicDefinition, at address: CharacteristicAddress)
    -> GATTError
  {
    GATTError(.noSubscribers, "no central is subscribed to \(definition.name) (\(address))")
  }

  /// Refuses a value longer than ATT_MTU − 3 of the smallest subscriber's `mtu`.
  public static func checkLength(
    _ count: Int, mtu: Int, central: CentralID?, _ definition: CharacteristicDefinition,
    at address: CharacteristicAddress, sending kind: CharacteristicProperties
  ) throws(GATTError) {
    guard count > mtu - 3 else { return }
    throw GATTError(
      .valueTooLong,
      "\(describe(kind)) of \(count) bytes on \(definition.name) (\(address)) exceeds ATT_MTU − 3 = \(mtu - 3) bytes"
        + (central.map { " of central \($0)" } ?? ""))
  }

  static func describe(_ kind: CharacteristicProperties) -> String {
    kind == .indicate ? "an indication" : "a notification"
  }
}
