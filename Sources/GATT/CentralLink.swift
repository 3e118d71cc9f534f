import Logging

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

extension CentralLink {
  /// Scans until the first peripheral that passes `filter` shows up, for at
  /// most `limit` on `clock`. Throws `timeout` (naming `what`) when none
  /// did, `notFound` when the scan ended first.
  public func firstPeripheral(
    matching filter: ScanFilter, within limit: Duration, clock: any Clock<Duration>, what: String = "peripheral"
  ) async throws -> DiscoveredPeripheral {
    try await Self.first(matching: filter, on: self, within: limit, clock: clock, what: what)
  }

  private static func first<C: Clock<Duration>>(
    matching filter: ScanFilter, on link: Self, within limit: Duration, clock: C, what: String
  ) async throws -> DiscoveredPeripheral {
    try await withThrowingTaskGroup(of: DiscoveredPeripheral.self) { group in
      group.addTask {
        for await peripheral in link.scan(filter: filter) { return peripheral }
        throw GATTError(.notFound, "the scan ended without a \(what)")
      }
      group.addTask {
        try await clock.sleep(for: limit)
        Logger.gatt.debug("the scan found nothing in time", metadata: ["what": "\(what)", "limit": "\(limit)"])
        throw GATTError(.timeout, "no \(what) found within \(limit)")
      }
      defer { group.cancelAll() }
      return try await group.next()!
    }
  }
}
