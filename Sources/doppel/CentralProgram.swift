import Foundation
import Synchronization

/// The outside central `doppel test` holds to a scenario: a program the user
/// names after `--`, started with the environment that tells it where the
/// devices are, its output passed through with a prefix so it stays apart
/// from Doppel's own.
final class CentralProgram: Sendable {
  /// How the program ended.
  enum Outcome: Sendable, Equatable {
    case exited(Int32)
    case signalled(Int32)
    /// Still running when the scenario ended (or Ctrl-C): Doppel stopped it.
    case stopped(signal: Int32)
    /// Never started: the devices could not be hosted.
    case notStarted

    var succeeded: Bool { self == .exited(0) }

    var description: String {
      switch self {
      case .exited(let status): "exited with status \(status)"
      case .signalled(let signal): "was killed by signal \(signal) (\(CentralProgram.signalName(signal)))"
      case .stopped(let signal):
        "was still running when the scenario ended; stopped with \(CentralProgram.signalName(signal))"
      case .notStarted: "did not start"
      }
    }
  }

  let arguments: [String]
  let executable: URL
  private let process = Process()
  private let finished = Atomic<Bool>(false)
  private let started = Atomic<Bool>(false)
  private let stoppedBy = Mutex<Int32?>(nil)
  private let prefix: String

  /// Finds the program (a path, or a name on PATH); throws a message saying
  /// what is wrong when it is missing or not executable.
  init(_ arguments: [String], prefix: String = "central│ ") throws(CentralProgramError) {
    guard let name = arguments.first, !name.isEmpty else {
      throw CentralProgramError("give the central to run after --, e.g. doppel test SCENARIO -- pytest tests/")
    }
    self.arguments = arguments
    self.prefix = prefix
    self.executable = try Self.resolve(name)
  }

  private static func resolve(_ name: String) throws(CentralProgramError) -> URL {
    let files = FileManager.default
    if name.contains("/") {
      guard files.fileExists(atPath: name) else { throw CentralProgramError("'\(name)' does not exist") }
      guard files.isExecutableFile(atPath: name) else {
        throw CentralProgramError("'\(name)' is not executable (chmod +x it, or run it through its interpreter)")
      }
      return URL(fileURLWithPath: name)
    }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for folder in path.split(separator: ":") {
      let candidate = "\(folder)/\(name)"
      if files.isExecutableFile(atPath: candidate) { return URL(fileURLWithPath: candidate) }
    }
    throw CentralProgramError("'\(name)' is not a program on PATH")
  }

  /// Whether the program has ended.
  var hasEnded: Bool { finished.load(ordering: .acquiring) }

  /// Starts it with `environment` added to Doppel's own.
  func start(environment: [String: String]) throws {
    process.executableURL = executable
    process.arguments = Array(arguments.dropFirst())
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    process.standardInput = FileHandle.nullDevice
    let lines = LineSplitter(prefix: prefix)
    output.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      if data.isEmpty {
        handle.readabilityHandler = nil
        lines.flush()
      } else {
        lines.add(data)
      }
    }
    process.terminationHandler = { [weak self] _ in self?.finished.store(true, ordering: .releasing) }
    try process.run()
    started.store(true, ordering: .releasing)
  }

  /// Stops the program if it still runs (SIGTERM, then SIGKILL after
  /// `grace`), waits for it, and says how it ended.
  func finish(grace: Duration = .seconds(5)) async -> Outcome {
    guard started.load(ordering: .acquiring) else { return .notStarted }
    if !hasEnded, process.isRunning {
      stoppedBy.withLock { $0 = SIGTERM }
      process.terminate()
      let deadline = ContinuousClock.now + grace
      while !hasEnded, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
      if !hasEnded {
        stoppedBy.withLock { $0 = SIGKILL }
        kill(process.processIdentifier, SIGKILL)
      }
    }
    while !hasEnded { try? await Task.sleep(for: .milliseconds(20)) }
    // Let the last of its output through.
    try? await Task.sleep(for: .milliseconds(50))
    if let signal = stoppedBy.withLock({ $0 }) { return .stopped(signal: signal) }
    switch process.terminationReason {
    case .uncaughtSignal: return .signalled(process.terminationStatus)
    default: return .exited(process.terminationStatus)
    }
  }

  static func signalName(_ signal: Int32) -> String {
    switch signal {
    case SIGTERM: "SIGTERM"
    case SIGKILL: "SIGKILL"
    case SIGINT: "SIGINT"
    case SIGSEGV: "SIGSEGV"
    case SIGABRT: "SIGABRT"
    case SIGBUS: "SIGBUS"
    case SIGHUP: "SIGHUP"
    default: "signal \(signal)"
    }
  }
}

/// What is wrong with the central program, in a sentence.
struct CentralProgramError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Prints a program's output line by line, each with a prefix.
final class LineSplitter: Sendable {
  private let pending = Mutex<[UInt8]>([])
  private let prefix: String

  init(prefix: String) { self.prefix = prefix }

  func add(_ data: Data) {
    let complete: [[UInt8]] = pending.withLock { pending in
      pending += data
      var lines: [[UInt8]] = []
      while let newline = pending.firstIndex(of: 0x0A) {
        lines.append(Array(pending[..<newline]))
        pending.removeSubrange(...newline)
      }
      return lines
    }
    for line in complete { emit(line) }
  }

  func flush() {
    let rest = pending.withLock { pending in
      defer { pending = [] }
      return pending
    }
    if !rest.isEmpty { emit(rest) }
  }

  private func emit(_ line: [UInt8]) {
    FileHandle.standardOutput.write(Data((prefix + String(decoding: line, as: UTF8.self) + "\n").utf8))
  }
}
