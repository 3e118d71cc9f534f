import GATT
import Logging

/// One client's life in a run, the same for every binding: connect (scan
/// with a timeout and connect, the client stack's own way), serve the link
/// until it drops, report `connected` and `disconnected`, and connect again
/// by policy, until the run ends (the task is cancelled).
///
/// ```swift
/// await ClientSession(device: id, context: context, reconnect: true).run(
///   connect: { let client = Client(link: context.link); try await client.connect(timeout: timeout); return client },
///   serve: { client in for try await reading in try await client.readings() { … } },
///   close: { client in await client.disconnect() })
/// ```
public struct ClientSession: Sendable {
  /// The scenario's device id the events are reported under.
  public let device: String
  public let context: ClientContext
  /// Whether to connect again after the link dropped or connecting failed.
  public let reconnect: Bool
  /// How long to wait after a failure that is not a lost link, so a
  /// persistent failure does not spin.
  public let retryDelay: Duration

  public init(device: String, context: ClientContext, reconnect: Bool, retryDelay: Duration = .seconds(1)) {
    self.device = device
    self.context = context
    self.reconnect = reconnect
    self.retryDelay = retryDelay
  }

  /// Runs the session until cancelled (or, without `reconnect`, until the first link ends).
  ///
  /// - Parameters:
  ///   - connect: finds the device and connects; returns the connected client.
  ///   - serve: uses the link; returns when the link dropped, or throws
  ///     (a `GATTError` `.disconnected` counts as the link dropping).
  ///   - linkLost: whether an error `serve` threw means the link dropped
  ///     (for client stacks with errors of their own); `nil` when it does not.
  ///   - close: disconnects the client when the run ends or after a failure.
  public func run<Client: Sendable>(
    connect: () async throws -> Client,
    serve: (Client) async throws -> Void,
    linkLost: (any Error, Client) async -> String? = { _, _ in nil },
    close: (Client) async -> Void
  ) async {
    let observer = context.observer
    repeat {
      var client: Client?
      do {
        let connected = try await connect()
        client = connected
        Logger.scenario.debug("client connected", metadata: ["device": "\(device)"])
        observer.event("connected", device: device)
        try await serve(connected)
        if Task.isCancelled {
          await close(connected)
          return
        }
        Logger.scenario.debug("client's link ended", metadata: ["device": "\(device)"])
        observer.event("disconnected", device: device)
      } catch {
        if Task.isCancelled {
          if let client { await close(client) }
          return
        }
        Logger.scenario.debug("client session: \(error)", metadata: ["device": "\(device)"])
        if let reason = await Self.disconnection(in: error, client: client, linkLost: linkLost) {
          observer.event("disconnected", device: device, detail: reason)
        } else {
          observer.error("\(error)", device: device)
          if let client { await close(client) }
          try? await context.clock.sleep(for: retryDelay)
        }
      }
    } while reconnect && !Task.isCancelled
  }

  private static func disconnection<Client>(
    in error: any Error, client: Client?, linkLost: (any Error, Client) async -> String?
  ) async -> String? {
    if let gatt = error as? GATTError, case .disconnected(let reason) = gatt.code { return "\(reason)" }
    guard let client else { return nil }
    return await linkLost(error, client)
  }
}
