/// What a central-side client stack sees of the transport (BlueZ, or the
/// loopback): scanning and connecting.
public protocol CentralLink: Sendable {
  /// Scans for advertising peripherals that pass `filter`. Each peripheral is
  /// reported when first seen; the scan stops when the stream's consumer stops
  /// (the stream is terminated or the iterating task cancelled).
  func scan(filter: ScanFilter) -> AsyncStream<DiscoveredPeripheral>

  /// Connects to a peripheral. Throws `notFound` for a peripheral the
  /// transport does not know, `timeout` when the connection is not made in time.
  /// Connecting to a peripheral that is already connected returns that connection.
  func connect(_ peripheral: PeripheralID, timeout: Duration) async throws(GATTError)
    -> any CentralConnection
}
