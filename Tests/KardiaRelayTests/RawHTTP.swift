import NIOCore
import NIOPosix

/// A TCP client that sends bytes as they are and reads until the server
/// closes: for requests the relay would never send.
enum RawHTTP {
  /// Sends `request` to 127.0.0.1:`port` and returns everything the server
  /// sent before closing (callers bound it with `TimedOut.within`);
  /// `connected` runs once the TCP connection is up.
  static func exchange(
    _ request: String, port: Int, connected: @Sendable () -> Void = {}
  ) async throws -> String {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .connect(host: "127.0.0.1", port: port) { channel in
        channel.eventLoop.makeCompletedFuture {
          try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        }
      }
    connected()
    return try await withTaskCancellationHandler {
      try await channel.executeThenClose { inbound, outbound in
        if !request.isEmpty { try await outbound.write(ByteBuffer(string: request)) }
        var response = ""
        for try await buffer in inbound { response += String(buffer: buffer) }
        return response
      }
    } onCancel: {
      channel.channel.close(promise: nil)
    }
  }

  /// A server on a free port that accepts connections and never answers.
  static func silentServer() async throws -> (port: Int, stop: @Sendable () async -> Void) {
    let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .bind(host: "127.0.0.1", port: 0).get()
    let port = server.localAddress?.port ?? 0
    return (port, { try? await server.close() })
  }
}
