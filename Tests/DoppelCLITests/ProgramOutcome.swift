import Foundation

/// What a program a test started printed, and how it ended.
struct ProgramOutcome {
  var status: Int32
  var output: String
  var error: String

  /// Runs `executable` with `arguments` and this process's environment overlaid
  /// with `environment`, to its end. Never a terminal on standard input: a
  /// program that would ask (`doppel import`) must not wait.
  static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws
    -> ProgramOutcome
  {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardInput = FileHandle.nullDevice
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let error = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProgramOutcome(
      status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
      error: String(decoding: error, as: UTF8.self))
  }
}
