/// A connection from a central to a peripheral: GATT client operations and
/// connection events.
///
/// Every operation on a connection that has ended throws `notConnected`; an
/// operation in progress when it ends throws `disconnected(reason)`.
public protocol CentralConnection: Sendable {
  /// The peripheral at the other end.
  var peripheral: PeripheralID { get }

  /// The current ATT MTU (23 until an MTU exchange raises it).
  var mtu: Int { get async }

  /// Discovers the peripheral's services, characteristics and descriptors.
  func discoverServices() async throws(GATTError) -> [DiscoveredService]

  /// Reads a characteristic's whole value (long values in several ATT reads).
  /// A refusal by the peripheral throws `attribute(ATTError)`.
  func read(_ characteristic: CharacteristicAddress) async throws(GATTError) -> [UInt8]

  /// Reads the value of one of a characteristic's descriptors (not the
  /// CCCD, which the transport manages). Throws `notFound` for a descriptor
  /// the characteristic does not have, `attribute(ATTError)` when the
  /// peripheral refuses.
  func read(descriptor: BluetoothUUID, of characteristic: CharacteristicAddress) async throws(GATTError) -> [UInt8]

  /// Writes a characteristic's value.
  ///
  /// With response, returns when the peripheral has accepted the value; a
  /// refusal throws `attribute(ATTError)`. Without response, returns once
  /// the value is sent; it throws `valueTooLong` when the value exceeds
  /// ATT_MTU − 3. Throws `notSupported` when the characteristic lacks the
  /// matching write property.
  func write(_ value: [UInt8], to characteristic: CharacteristicAddress, type: WriteType)
    async throws(GATTError)

  /// Subscribes to notifications (or indications, if the characteristic only
  /// indicates) and returns the stream of values, in the order the peripheral
  /// sent them. Returns once the peripheral has processed the subscription.
  ///
  /// Ending the stream (the consumer stops iterating, or drops it)
  /// unsubscribes. The stream finishes when the connection ends: without error
  /// after a local `disconnect()`, with `GATTError` code `disconnected` otherwise.
  func notifications(of characteristic: CharacteristicAddress) async throws(GATTError)
    -> NotificationStream

  /// Ends the connection. Does nothing when it has already ended.
  func disconnect() async

  /// Why the connection ended; `nil` while it is up.
  var disconnectReason: DisconnectReason? { get async }

  /// A new stream of this connection's events from now on. After the
  /// connection ended, the stream yields `.disconnected` at once and finishes.
  func events() -> AsyncStream<ConnectionEvent>
}

extension CentralConnection {
  /// Waits until the connection ends and returns why. Throws
  /// `CancellationError` if the waiting task is cancelled first.
  public func disconnected() async throws -> DisconnectReason {
    for await event in events() {
      if case .disconnected(let reason) = event { return reason }
    }
    try Task.checkCancellation()
    return await disconnectReason ?? .other("event stream ended")
  }
}
