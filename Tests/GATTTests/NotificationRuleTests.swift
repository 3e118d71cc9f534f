import GATT
import Testing

/// The rules both hosts enforce on a notification, and their one wording.
struct NotificationRuleTests {
  static let service: BluetoothUUID = "0000aaaa-0000-1000-8000-00805f9b34fb"
  static let notifying = CharacteristicAddress(service: service, characteristic: BluetoothUUID(0xAAA1))
  static let readOnly = CharacteristicAddress(service: service, characteristic: BluetoothUUID(0xAAA2))
  static let profile = try! GATTProfile([
    ServiceDefinition(
      service, name: "Test",
      characteristics: [
        CharacteristicDefinition(notifying.characteristic, name: "Level", properties: [.notify]),
        CharacteristicDefinition(readOnly.characteristic, name: "Name", properties: [.read]),
      ])
  ])

  @Test func aCharacteristicThatNotifiesPasses() throws {
    let definition = try NotificationRule.definition(in: Self.profile, at: Self.notifying, sending: .notify)
    #expect(definition.name == "Level")
  }

  @Test func anUnknownCharacteristicIsNotFound() {
    let missing = CharacteristicAddress(service: Self.service, characteristic: BluetoothUUID(0xAAA9))
    #expect(throws: GATTError.self) {
      try NotificationRule.definition(in: Self.profile, at: missing, sending: .notify)
    }
    do {
      _ = try NotificationRule.definition(in: Self.profile, at: missing, sending: .notify)
    } catch {
      #expect(error.code == .notFound)
      #expect(error.message.contains("no characteristic"))
    }
  }

  @Test func aCharacteristicWithoutThePropertyIsNotSupported() {
    do {
      _ = try NotificationRule.definition(in: Self.profile, at: Self.readOnly, sending: .indicate)
      Issue.record("a read-only characteristic sent an indication")
    } catch {
      #expect(error.code == .notSupported)
      #expect(error.message.contains("Name"))
      #expect(error.message.contains("cannot send an indication"))
    }
  }

  @Test func noSubscriberNamesTheCharacteristic() throws {
    let definition = try NotificationRule.definition(in: Self.profile, at: Self.notifying, sending: .notify)
    let error = NotificationRule.noSubscribers(definition, at: Self.notifying)
    #expect(error.code == .noSubscribers)
    #expect(error.message.hasPrefix("no central is subscribed to Level"))
  }

  @Test func aValueMustFitTheSmallestMTU() throws {
    let definition = try NotificationRule.definition(in: Self.profile, at: Self.notifying, sending: .notify)
    try NotificationRule.checkLength(20, mtu: 23, central: nil, definition, at: Self.notifying, sending: .notify)
    do {
      try NotificationRule.checkLength(21, mtu: 23, central: nil, definition, at: Self.notifying, sending: .notify)
      Issue.record("21 bytes passed ATT_MTU 23")
    } catch {
      #expect(error.code == .valueTooLong)
      #expect(error.message.contains("a notification of 21 bytes on Level"))
      #expect(error.message.contains("ATT_MTU − 3 = 20 bytes"))
    }
  }
}
