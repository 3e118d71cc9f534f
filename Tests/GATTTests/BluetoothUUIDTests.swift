import Foundation
import GATT
import Testing

struct BluetoothUUIDTests {
  @Test(arguments: [
    "180A", "180a", "0x180A", "0X180a", "0000180a-0000-1000-8000-00805f9b34fb",
    "0000180A-0000-1000-8000-00805F9B34FB", "0000180a00001000800000805f9b34fb", "0000180A",
  ])
  func parsesEveryFormOfASixteenBitAlias(_ text: String) throws {
    let uuid = try BluetoothUUID(string: text)
    #expect(uuid == BluetoothUUID(0x180A))
    #expect(uuid.alias16 == 0x180A)
    #expect(uuid.description == "180A")
    #expect(uuid.uuidString == "0000180a-0000-1000-8000-00805f9b34fb")
  }

  @Test func printsA128BitUUIDInFullLowercase() throws {
    let uuid = try BluetoothUUID(string: "713D0002-503E-4C75-BA94-3148F18D941E")
    #expect(uuid.description == "713d0002-503e-4c75-ba94-3148f18d941e")
    #expect(uuid.uuidString == "713d0002-503e-4c75-ba94-3148f18d941e")
    #expect(uuid.alias16 == nil)
    #expect(uuid.alias32 == nil)
    #expect(!uuid.isSIGBased)
    #expect(uuid.shortestLittleEndianBytes == uuid.bytes.reversed())
  }

  @Test func printsA32BitAliasInEightDigits() throws {
    let uuid = try BluetoothUUID(string: "0x0001FFFF")
    #expect(uuid.description == "0001FFFF")
    #expect(uuid.uuidString == "0001ffff-0000-1000-8000-00805f9b34fb")
    #expect(uuid.alias32 == 0x0001_FFFF)
    #expect(uuid.alias16 == nil)
    #expect(uuid.shortestLittleEndianBytes == [0xFF, 0xFF, 0x01, 0x00])
  }

  @Test func encodesTheShortestFormLittleEndian() {
    #expect(BluetoothUUID(0x180A).shortestLittleEndianBytes == [0x0A, 0x18])
    #expect(BluetoothUUID(0x180A).bytes.count == 16)
    #expect(BluetoothUUID(bytes: BluetoothUUID(0x180A).bytes) == BluetoothUUID(0x180A))
  }

  @Test func equalFormsHashAlike() throws {
    let set: Set<BluetoothUUID> = [
      try BluetoothUUID(string: "2a27"),
      try BluetoothUUID(string: "00002A27-0000-1000-8000-00805F9B34FB"),
    ]
    #expect(set.count == 1)
  }

  @Test func roundTripsThroughCodableInShortForm() throws {
    let uuids: [BluetoothUUID] = ["180A", "713d0000-503e-4c75-ba94-3148f18d941e"]
    let data = try JSONEncoder().encode(uuids)
    #expect(
      String(decoding: data, as: UTF8.self) == #"["180A","713d0000-503e-4c75-ba94-3148f18d941e"]"#)
    #expect(try JSONDecoder().decode([BluetoothUUID].self, from: data) == uuids)
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode([BluetoothUUID].self, from: Data(#"["18"]"#.utf8))
    }
  }

  @Test func reportsWhatIsWrong() {
    func reason(_ text: String) -> BluetoothUUID.ParseError.Reason? {
      do {
        _ = try BluetoothUUID(string: text)
        return nil
      } catch {
        return error.reason
      }
    }
    #expect(reason("") == .empty)
    #expect(reason("18G0") == .invalidCharacter("G", offset: 2))
    #expect(reason("0x18Z0") == .invalidCharacter("Z", offset: 4))
    #expect(reason("180") == .invalidLength(hexDigits: 3))
    #expect(reason("0x") == .invalidCharacter("x", offset: 1))
    #expect(reason("0000180a-0000-1000-8000-00805f9b34f") == .misplacedHyphen(offset: 8))
    #expect(reason("0000180a0-000-1000-8000-00805f9b34fb") == .misplacedHyphen(offset: 9))
    #expect(reason("180A ") == .invalidCharacter(" ", offset: 4))
    #expect(reason("１８０Ａ") == .invalidCharacter("１", offset: 0))
  }

  @Test func errorMessagesNameTheInputAndTheProblem() {
    #expect(throws: BluetoothUUID.ParseError.self) { try BluetoothUUID(string: "18G0") }
    do {
      _ = try BluetoothUUID(string: "18G0")
    } catch {
      #expect(
        error.description
          == #"invalid Bluetooth UUID "18G0": "G" at offset 2 is not a hexadecimal digit"#)
    }
    do {
      _ = try BluetoothUUID(string: "12345")
    } catch {
      #expect(error.description.contains("5 hex digits; expected 4 (16-bit), 8 (32-bit) or 32"))
    }
  }

  @Test func ordersByValue() {
    #expect(BluetoothUUID(0x180A) < BluetoothUUID(0x180F))
    #expect(
      [BluetoothUUID(0x2A27), BluetoothUUID(0x180A)].sorted() == [
        BluetoothUUID(0x180A), BluetoothUUID(0x2A27),
      ])
  }
}
