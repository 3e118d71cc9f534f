import GATT

/// A peripheral's GATT database as the discovery responses in a capture
/// show it: services with their handle ranges, characteristic declarations,
/// descriptors, and every value read.
public struct CapturedDatabase: Sendable {
  public struct Service: Sendable, Hashable {
    public var start: UInt16
    public var end: UInt16
    public var uuid: BluetoothUUID
  }

  public struct Characteristic: Sendable, Hashable {
    public var declaration: UInt16
    public var properties: CharacteristicProperties
    public var valueHandle: UInt16
    public var uuid: BluetoothUUID
  }

  /// By start handle.
  public var services: [UInt16: Service] = [:]
  /// By value handle.
  public var characteristics: [UInt16: Characteristic] = [:]
  /// Descriptor UUIDs by handle (as Find Information answered; declarations and values included).
  public var descriptors: [UInt16: BluetoothUUID] = [:]
  /// The first value read of each handle.
  public var values: [UInt16: [UInt8]] = [:]

  public init() {}

  /// The service whose range holds `handle`.
  public func service(holding handle: UInt16) -> Service? {
    services.values.first { $0.start <= handle && handle <= $0.end }
  }

  /// The characteristic whose value or descriptors are at `handle`.
  public func characteristic(owning handle: UInt16) -> Characteristic? {
    characteristics.values.filter { $0.valueHandle <= handle }.max { $0.valueHandle < $1.valueHandle }
      .flatMap { candidate in
        let next = characteristics.values.filter { $0.declaration > candidate.declaration }.map(\.declaration).min()
        let end = min(Int(next ?? .max), service(holding: candidate.valueHandle).map { Int($0.end) + 1 } ?? Int.max)
        return Int(handle) < end ? candidate : nil
      }
  }

  /// Whether `handle` is a Client Characteristic Configuration descriptor:
  /// discovered as one, or (when discovery did not show it) the handle just
  /// after a notifying or indicating characteristic's value.
  public func isCCCD(_ handle: UInt16) -> Bool {
    // Handle 0 is no attribute (and has no handle before it).
    guard handle > 0 else { return false }
    if let uuid = descriptors[handle] { return uuid == .clientCharacteristicConfiguration }
    guard let characteristic = characteristics[handle - 1] else { return false }
    return characteristic.properties.contains(.notify) || characteristic.properties.contains(.indicate)
  }

  /// Adds what `other` knows and this does not.
  public mutating func merge(_ other: CapturedDatabase) {
    services.merge(other.services) { mine, _ in mine }
    characteristics.merge(other.characteristics) { mine, _ in mine }
    descriptors.merge(other.descriptors) { mine, _ in mine }
    values.merge(other.values) { mine, _ in mine }
  }
}
