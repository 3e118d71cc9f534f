import DBus
import Foundation

/// A private `dbus-daemon` for one test: its own socket in a fresh temporary
/// directory, stopped when the value is released.
final class PrivateBus: Sendable {
  let address: String
  let directory: URL
  private let process: Process

  init() async throws {
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
    // The daemon is ready once its socket exists; wait for that, bounded.
    for _ in 0..<500 {
      if FileManager.default.fileExists(atPath: socket) { return }
      try await Task.sleep(for: .milliseconds(10))
    }
    process.terminate()
    throw DBusError(name: DBusError.Name.failed, message: "dbus-daemon did not create \(socket) within 5 s")
  }

  func connect() async throws -> DBusConnection {
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
