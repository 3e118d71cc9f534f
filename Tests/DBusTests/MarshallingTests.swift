import Foundation
import Testing

@testable import DBus

/// Values through libdbus's wire format and back, with no bus.
@Suite struct MarshallingTests {
  func roundTrip(_ values: [DBusValue]) throws -> [DBusValue] {
    let message = try DBusMessage.signal(
      path: ObjectPath("/t"), interface: "org.doppel.Test", member: "Values", body: values)
    let bytes = try LibDBusMessage.marshal(message)
    let decoded = try LibDBusMessage.demarshal(bytes)
    #expect(decoded.signature == message.signature)
    return decoded.body
  }

  @Test(arguments: [
    DBusValue.byte(0), .byte(255), .boolean(true), .boolean(false),
    .int16(.min), .int16(.max), .uint16(.max), .int32(.min), .int32(.max), .uint32(.max),
    .int64(.min), .int64(.max), .uint64(.max), .double(-1.5e300), .double(0.1),
    .string(""), .string("héllo ✓ 𝄞"), .objectPath(.root), .objectPath(try! ObjectPath("/org/bluez/hci0/dev_00_AA")),
    .signature(try! DBusSignature("a{oa{sa{sv}}}")),
  ])
  func basicTypes(_ value: DBusValue) throws {
    #expect(try roundTrip([value]) == [value])
  }

  @Test func byteArrays() throws {
    let large = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    #expect(
      try roundTrip([.bytes([]), .bytes([0, 1, 255]), .bytes(large)]) == [
        .bytes([]), .bytes([0, 1, 255]), .bytes(large),
      ])
    // An array of .byte values is built as the `ay` fast path.
    #expect(DBusValue.array(of: .byte, [.byte(7), .byte(9)]) == .bytes([7, 9]))
  }

  @Test func emptyContainersKeepTheirSignature() throws {
    let values: [DBusValue] = [
      .array(.string, []), .array(.array(.int32), []), .dictionary(key: .string, value: .variant, []),
      .array(.structure([.objectPath, .array(.byte)]), []),
    ]
    let decoded = try roundTrip(values)
    #expect(decoded == values)
    #expect(decoded.map(\.type.signature) == ["as", "aai", "a{sv}", "a(oay)"])
  }

  @Test func bluezShapedDictionaries() throws {
    let properties: DBusValue = .properties([
      "UUID": .string("713d0002-503e-4c75-ba94-3148f18d941e"), "Flags": .strings(["notify", "read"]),
      "Value": .bytes([0x31, 0x32]), "Notifying": .boolean(true), "MTU": .uint16(247),
    ])
    let managed: DBusValue = .dictionary(
      key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
      [
        DBusDictionaryEntry(
          .objectPath(try ObjectPath("/app/service0/char0")),
          .dictionary(
            key: .string, value: .dictionary(key: .string, value: .variant),
            [DBusDictionaryEntry(.string("org.bluez.GattCharacteristic1"), properties)]))
      ])
    let decoded = try roundTrip([properties, managed])
    #expect(decoded == [properties, managed])
    #expect(decoded[0].dictionary?["MTU"]?.int == 247)
    #expect(decoded[0].dictionary?["Flags"]?.strings == ["notify", "read"])
  }

  @Test func structsVariantsAndNesting() throws {
    let value: DBusValue = .structure([
      .int32(-3), .variant(.variant(.string("deep"))), .array(.variant, [.variant(.uint64(1)), .variant(.bytes([9]))]),
      .dictionary(
        key: .uint32, value: .structure([.string, .double]),
        [DBusDictionaryEntry(.uint32(1), .structure([.string("x"), .double(2.5)]))]),
    ])
    let decoded = try roundTrip([value])
    #expect(decoded == [value])
    #expect(decoded[0].fields?[1].unwrapped == .string("deep"))
  }

  @Test func headersSurvive() throws {
    var call = try DBusMessage.methodCall(
      destination: "org.bluez", path: ObjectPath("/org/bluez/hci0"), interface: "org.bluez.Adapter1",
      member: "StartDiscovery", body: [.uint32(7)])
    call.noReplyExpected = true
    let decoded = try LibDBusMessage.demarshal(try LibDBusMessage.marshal(call, serial: 42))
    #expect(decoded.kind == .methodCall)
    #expect(decoded.serial == 42)
    #expect(decoded.destination == "org.bluez")
    #expect(decoded.path?.rawValue == "/org/bluez/hci0")
    #expect(decoded.interface == "org.bluez.Adapter1")
    #expect(decoded.member == "StartDiscovery")
    #expect(decoded.noReplyExpected)
    #expect(decoded.body == [.uint32(7)])
  }

  @Test func garbageIsRejectedNotCrashed() {
    #expect(throws: DBusError.self) {
      try LibDBusMessage.demarshal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16])
    }
  }
}

/// Signatures and validation: invalid input is an error, never an abort.
@Suite struct ValidationTests {
  @Test func signaturesParse() throws {
    #expect(
      try DBusType.parse("sa{sv}(ii)aay") == [
        .string, .dictionary(key: .string, value: .variant), .structure([.int32, .int32]), .array(.array(.byte)),
      ])
    #expect(try DBusType.parse("") == [])
    #expect(try DBusType.parseSingle("a{oa{sa{sv}}}").signature == "a{oa{sa{sv}}}")
  }

  @Test(arguments: ["a", "a{vs}", "(", "()", "a{s}", "a{sss}", "z", "(i", String(repeating: "a", count: 70) + "i"])
  func invalidSignaturesAreErrors(_ text: String) {
    #expect(throws: DBusError.self) { try DBusType.parse(text) }
    do {
      _ = try DBusType.parse(text)
    } catch {
      #expect(error.name == DBusError.Name.invalidSignature)
      #expect(error.message.contains(text))
    }
  }

  @Test(arguments: ["", "no-slash", "/trailing/", "//double", "/bad-char", "/a\u{0}b"])
  func invalidObjectPaths(_ text: String) {
    #expect(throws: DBusError.self) { try ObjectPath(text) }
  }

  @Test func invalidNamesThrowInsteadOfAborting() throws {
    let path = try ObjectPath("/ok")
    #expect(throws: DBusError.self) {
      try DBusMessage.methodCall(destination: "org.bluez", path: path, interface: "no dots", member: "M")
    }
    #expect(throws: DBusError.self) {
      try DBusMessage.methodCall(destination: "org.bluez", path: path, interface: "a.b", member: "9bad")
    }
    #expect(throws: DBusError.self) {
      try DBusMessage.methodCall(destination: "bad..name", path: path, interface: "a.b", member: "M")
    }
    #expect(throws: DBusError.self) { try DBusMessage.signal(path: path, interface: "a.b", member: "M.x") }
    #expect(throws: DBusError.self) { try DBusMatchRule(interface: "x") }
  }

  @Test func illTypedValuesAreErrors() throws {
    let cases: [DBusValue] = [
      .array(.string, [.string("a"), .int32(1)]),
      .dictionary(key: .string, value: .variant, [DBusDictionaryEntry(.string("k"), .int32(1))]),
      .dictionary(key: .variant, value: .int32, []),
      .structure([]),
      .string("nul\u{0}inside"),
    ]
    for value in cases {
      #expect(throws: DBusError.self) { try value.validate() }
      let message = try DBusMessage.signal(path: ObjectPath("/t"), interface: "a.b", member: "C", body: [value])
      #expect(throws: DBusError.self) { try LibDBusMessage.make(message) }
    }
  }

  @Test func matchRuleText() throws {
    let rule = try DBusMatchRule(
      sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
      pathNamespace: ObjectPath("/org/bluez"), arg0: "it's")
    #expect(
      rule.description
        == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='/org/bluez',arg0='it'\\''s'"
    )
  }
}
