import ArgumentParser
import DoppelKit
import Foundation

/// `--log-level` on every verb (or `DOPPEL_LOG_LEVEL`): what doppel logs to
/// standard error. In the lab, every message at debug level also goes to a
/// file in the artifacts (`DOPPEL_LOG_DIR`).
struct LoggingOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "What to log to standard error: \(DoppelLogging.levels.joined(separator: ", ")).",
      discussion: "Default: DOPPEL_LOG_LEVEL, else warning. At debug, every method bluetoothd calls on a hosted "
        + "device and every change of a link's state is logged.",
      valueName: "level"))
  var logLevel: String?

  func validate() throws {
    if let logLevel, DoppelLogging.level(named: logLevel) == nil {
      throw ValidationError(
        "--log-level takes one of \(DoppelLogging.levels.joined(separator: ", ")), not '\(logLevel)'")
    }
    if logLevel == nil, let name = ProcessInfo.processInfo.environment["DOPPEL_LOG_LEVEL"],
      DoppelLogging.level(named: name) == nil
    {
      throw ValidationError(
        "DOPPEL_LOG_LEVEL takes one of \(DoppelLogging.levels.joined(separator: ", ")), not '\(name)'")
    }
  }

  /// Sets up logging for `command` (once per process).
  func bootstrap(_ command: String) {
    let name = logLevel ?? ProcessInfo.processInfo.environment["DOPPEL_LOG_LEVEL"] ?? "warning"
    DoppelLogging.bootstrap(level: DoppelLogging.level(named: name) ?? .warning, command: command)
  }
}
