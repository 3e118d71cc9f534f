import GATT
import Testing

struct CharacteristicPropertiesTests {
  @Test func mapsEveryPropertyToItsBlueZFlag() {
    let all: CharacteristicProperties = [
      .broadcast, .read, .writeWithoutResponse, .write, .notify, .indicate,
      .authenticatedSignedWrites,
      .extendedProperties,
    ]
    #expect(
      all.bluezFlags == [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties",
      ])
    #expect(all.rawValue == 0xFF)
    #expect(CharacteristicProperties(bluezFlags: all.bluezFlags) == all)
  }

  @Test func usesTheATTBitValues() {
    #expect(CharacteristicProperties.read.rawValue == 0x02)
    #expect(CharacteristicProperties.writeWithoutResponse.rawValue == 0x04)
    #expect(CharacteristicProperties.notify.rawValue == 0x10)
    #expect(CharacteristicProperties.indicate.rawValue == 0x20)
  }

  @Test func readsBlueZFlagsIgnoringPermissionFlags() {
    let properties = CharacteristicProperties(bluezFlags: [
      "notify", "encrypt-read", "write-without-response", "authorize",
    ])
    #expect(properties == [.notify, .writeWithoutResponse])
    #expect(properties.bluezFlags == ["write-without-response", "notify"])
    #expect(properties.description == "write-without-response|notify")
    #expect(CharacteristicProperties().description == "none")
  }

  @Test func mapsWriteTypesToBlueZ() {
    #expect(WriteType.withResponse.bluezType == "request")
    #expect(WriteType.withoutResponse.bluezType == "command")
    #expect(WriteType(bluezType: "command") == .withoutResponse)
    #expect(WriteType(bluezType: "request") == .withResponse)
    #expect(WriteType(bluezType: "reliable") == .withResponse)
    #expect(WriteType(bluezType: "other") == nil)
  }

  @Test func namesATTErrors() {
    #expect(ATTError.writeNotPermitted.code == 0x03)
    #expect(ATTError.invalidAttributeValueLength.code == 0x0D)
    #expect(ATTError.unlikelyError.code == 0x0E)
    #expect(ATTError.writeNotPermitted.description == "ATT error 0x03 (Write Not Permitted)")
    #expect(ATTError.application(0x9F).isApplicationError)
    #expect(ATTError.application(0x80).description == "ATT error 0x80 (Application Error)")
    #expect(!ATTError.invalidOffset.isApplicationError)
    #expect(ATTError(code: 0x0D) == .invalidAttributeValueLength)
  }
}
