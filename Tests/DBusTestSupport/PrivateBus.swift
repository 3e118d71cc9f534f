import DBus
import Foundation

/// A private `dbus-daemon` for one test: its own socket in a fresh temporary
/// directory, stopped when the value is released.
public final class PrivateBus: Sendable {
  public let address: String
  public let directory: URL
  private let process: Process

  public init() async throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("doppel-bus-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let socket = directory.appendingPathComponent("bus").path
    address = "unix:path=\(socket)"
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
    process.arguments = ["--session", "--nofork", "--nopidfile", "--address=\(address)"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    // The daemon is ready once its socket accepts connections (the file
    // appears at bind(), before listen(): existing is not enough).
    for _ in 0..<500 {
      if Self.accepts(socket) { return }
      try await Task.sleep(for: .milliseconds(10))
    }
    process.terminate()
    throw DBusError(name: DBusError.Name.failed, message: "dbus-daemon did not create \(socket) within 5 s")
  }

  /// Whether a Unix socket at `path` accepts a connection now.
  private static func accepts(_ path: String) -> Bool {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      for (index, byte) in bytes.enumerated() { buffer[index] = byte }
    }
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    return result == 0
  }

  public func connect() async throws -> DBusConnection {
    try await DBusConnection.connect(to: .address(address))
  }

  deinit {
    // SIGKILL: a child started from a dispatch thread inherits its blocked
    // signal mask, so SIGTERM would never arrive. Not waitUntilExit: it spins
    // a run loop, which must not happen on the cooperative pool.
    let pid = process.processIdentifier
    kill(pid, SIGKILL)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    try? FileManager.default.removeItem(at: directory)
  }
}
