import GATT

/// What a binding's client stack gets for an end-to-end run: the central
/// link to its device, the run's clock, where to report, and the
/// transport's capabilities (keeping virtual time still while the client
/// waits on something outside the run).
public struct ClientContext: Sendable {
  /// The link the client scans and connects on.
  public let link: any CentralLink
  /// The run's clock (virtual in the loopback, wall time over BlueZ).
  public let clock: any Clock<Duration>
  /// Where the client reports samples, events, metrics and errors.
  public let observer: ClientObserver
  private let transport: (any ScenarioTransport)?

  /// A context for a client of `transport`; `transport` may be `nil` when
  /// the client runs on its own (`doppel watch`), on a wall clock.
  public init(
    link: any CentralLink, clock: any Clock<Duration>, observer: ClientObserver,
    transport: (any ScenarioTransport)? = nil
  ) {
    self.link = link
    self.clock = clock
    self.observer = observer
    self.transport = transport
  }

  /// Runs `work`, which waits on something outside the run's clock (a
  /// server starting on threads of its own): where time is virtual, it
  /// stands still meanwhile.
  public func outsideRunTime<T: Sendable>(_ work: @Sendable () async throws -> T) async throws -> T {
    guard let transport else { return try await work() }
    return try await transport.outsideRunTime(work)
  }
}
