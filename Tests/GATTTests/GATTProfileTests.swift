import GATT
import Testing

struct GATTProfileTests {
  static let uart: BluetoothUUID = "713D0000-503E-4C75-BA94-3148F18D941E"
  static let tx: BluetoothUUID = "713D0002-503E-4C75-BA94-3148F18D941E"
  static let rx: BluetoothUUID = "713D0003-503E-4C75-BA94-3148F18D941E"

  static func blendMicro() throws -> GATTProfile {
    try GATTProfile([
      ServiceDefinition(
        uart, name: "UART",
        characteristics: [
          CharacteristicDefinition(tx, name: "UART TX", properties: .notify, maximumLength: 20),
          CharacteristicDefinition(
            rx, name: "UART RX", properties: .writeWithoutResponse, maximumLength: 20),
        ]),
      ServiceDefinition(
        BluetoothUUID(0x180A),
        characteristics: [
          CharacteristicDefinition(
            BluetoothUUID(0x2A27), name: "Hardware Revision", properties: .read,
            initialValue: [0x31])
        ]),
    ])
  }

  @Test func looksUpCharacteristicsByAddressAndByUUID() throws {
    let profile = try Self.blendMicro()
    let address = CharacteristicAddress(service: Self.uart, characteristic: Self.tx)
    #expect(profile.characteristic(at: address)?.name == "UART TX")
    #expect(profile.characteristic(Self.rx)?.name == "UART RX")
    #expect(
      profile.address(of: BluetoothUUID(0x2A27))
        == CharacteristicAddress(service: "180A", characteristic: "2A27"))
    #expect(profile.characteristic(BluetoothUUID(0x2A29)) == nil)
    #expect(profile.characteristicAddresses.count == 3)
  }

  @Test func aUUIDInTwoServicesIsAmbiguousByUUIDAlone() throws {
    let shared = BluetoothUUID(0x2A19)
    let profile = try GATTProfile([
      ServiceDefinition(
        BluetoothUUID(0x180F),
        characteristics: [CharacteristicDefinition(shared, name: "A", properties: .read)]),
      ServiceDefinition(
        BluetoothUUID(0x181A),
        characteristics: [CharacteristicDefinition(shared, name: "B", properties: .read)]),
    ])
    #expect(profile.characteristic(shared) == nil)
    #expect(
      profile.characteristic(at: CharacteristicAddress(service: "181A", characteristic: shared))?
        .name == "B")
  }

  @Test func rejectsDuplicatesAndInconsistencies() {
    let read = CharacteristicDefinition(BluetoothUUID(0x2A27), name: "Rev", properties: .read)
    let cases: [(String, [ServiceDefinition])] = [
      (
        "service 180A is declared more than once",
        [
          ServiceDefinition("180A", characteristics: [read]),
          ServiceDefinition("180A", characteristics: []),
        ]
      ),
      ("is declared more than once", [ServiceDefinition("180A", characteristics: [read, read])]),
      (
        "has no properties",
        [
          ServiceDefinition(
            "180A", characteristics: [CharacteristicDefinition("2A27", name: "Rev", properties: [])]
          )
        ]
      ),
      (
        "declares a CCCD",
        [
          ServiceDefinition(
            "180A",
            characteristics: [
              CharacteristicDefinition(
                "2A27", name: "Rev", properties: .notify,
                descriptors: [
                  DescriptorDefinition(.clientCharacteristicConfiguration, value: [0, 0])
                ])
            ])
        ]
      ),
      (
        "declares descriptor 2901 more than once",
        [
          ServiceDefinition(
            "180A",
            characteristics: [
              CharacteristicDefinition(
                "2A27", name: "Rev", properties: .read,
                descriptors: [.userDescription("a"), .userDescription("b")])
            ])
        ]
      ),
      (
        "initial value of 3 bytes, longer than 2",
        [
          ServiceDefinition(
            "180A",
            characteristics: [
              CharacteristicDefinition(
                "2A27", name: "Rev", properties: .read, initialValue: [1, 2, 3], maximumLength: 2)
            ])
        ]
      ),
      (
        "maximum length 600",
        [
          ServiceDefinition(
            "180A",
            characteristics: [
              CharacteristicDefinition("2A27", name: "Rev", properties: .read, maximumLength: 600)
            ])
        ]
      ),
    ]
    for (expected, services) in cases {
      do {
        _ = try GATTProfile(services)
        Issue.record("accepted a profile that should fail with \(expected)")
      } catch {
        #expect(error.description.contains(expected), "\(error.description)")
      }
    }
  }

  @Test func fixedHandlesMustLeaveRoomForEachAttribute() throws {
    func profile(service: UInt16?, _ tx: UInt16?, _ rx: UInt16?) throws(GATTProfile.ValidationError) -> GATTProfile {
      try GATTProfile([
        ServiceDefinition(
          Self.uart, name: "UART", handle: service,
          characteristics: [
            CharacteristicDefinition(Self.tx, name: "UART TX", properties: .notify, handle: tx),
            CharacteristicDefinition(Self.rx, name: "UART RX", properties: .writeWithoutResponse, handle: rx),
          ])
      ])
    }
    // Service 0x0c; TX: declaration 0x0d, value 0x0e, CCCD 0x0f; RX: declaration 0x10, value 0x11.
    #expect(try profile(service: 0x0C, 0x0E, 0x11).services[0].characteristics.map(\.handle) == [0x0E, 0x11])
    #expect(try profile(service: 0x0C, nil, nil).services[0].handle == 0x0C)
    // on the service's declaration
    #expect(throws: GATTProfile.ValidationError.self) { try profile(service: 0x0C, 0x0D, nil) }
    // on TX's CCCD
    #expect(throws: GATTProfile.ValidationError.self) { try profile(service: 0x0C, 0x0E, 0x10) }
    // out of order
    #expect(throws: GATTProfile.ValidationError.self) { try profile(service: 0x0C, 0x11, 0x0E) }
    // no service handle
    #expect(throws: GATTProfile.ValidationError.self) { try profile(service: nil, 0x0E, nil) }
    #expect(throws: GATTProfile.ValidationError.self) { try profile(service: 0, nil, nil) }
    do {
      _ = try profile(service: 0x0C, 0x0E, 0x10)
    } catch {
      #expect(error.description.contains("0x0010") && error.description.contains("0x0011"), "\(error)")
    }
  }

  @Test func describesDescriptorPermissionsForBlueZ() {
    #expect(DescriptorDefinition.Permissions([.read, .write]).bluezFlags == ["read", "write"])
    #expect(DescriptorDefinition.userDescription("UART TX").value == Array("UART TX".utf8))
  }
}
