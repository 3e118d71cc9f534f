import Foundation
import Logging
import Synchronization

/// How the `doppel` tool logs: to standard error at the level asked for
/// (`--log-level`, or `DOPPEL_LOG_LEVEL`; `warning` by default), and, when
/// `DOPPEL_LOG_DIR` names a folder (the lab sets it to its artifacts), every
/// message at `debug` to a file of its own there as well, so that a lab run
/// keeps doppel's side of the story beside bluetoothd's.
public enum DoppelLogging {
  /// The levels, as the options take them.
  public static let levels = Logger.Level.allCases.map(\.rawValue)

  /// The level called `name`, or `nil`.
  public static func level(named name: String) -> Logger.Level? { Logger.Level(rawValue: name.lowercased()) }

  private static let bootstrapped = Mutex(false)

  /// Sets up logging once per process; later calls do nothing. `command`
  /// names the log file (`doppel-e2e-<pid>.log`).
  public static func bootstrap(level: Logger.Level, command: String) {
    let first = bootstrapped.withLock { done in
      defer { done = true }
      return !done
    }
    guard first else { return }
    let file = ProcessInfo.processInfo.environment["DOPPEL_LOG_DIR"].flatMap { folder in
      LogFile(path: "\(folder)/doppel-\(command)-\(getpid()).log")
    }
    LoggingSystem.bootstrap { label in
      var console = StreamLogHandler.standardError(label: label)
      console.logLevel = level
      guard let file else { return console }
      return MultiplexLogHandler([console, LogFileHandler(label: label, file: file)])
    }
  }
}

/// A log file several handlers write lines to, under a lock.
final class LogFile: Sendable {
  private let handle: Mutex<FileHandle>

  init?(path: String) {
    guard FileManager.default.createFile(atPath: path, contents: nil),
      let handle = FileHandle(forWritingAtPath: path)
    else { return nil }
    self.handle = Mutex(handle)
  }

  func write(_ line: String) {
    handle.withLock { $0.write(Data((line + "\n").utf8)) }
  }
}

/// Writes every message at `debug` and above to a ``LogFile``, time-stamped.
struct LogFileHandler: LogHandler {
  let label: String
  let file: LogFile
  var logLevel: Logger.Level = .debug
  var metadata: Logger.Metadata = [:]

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    let all = metadata.merging(event.metadata ?? [:]) { $1 }
    let details =
      all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    let time = String(format: "%.6f", Date().timeIntervalSince1970)
    file.write("\(time) \(event.level) \(label): \(event.message)\(details)")
  }
}
