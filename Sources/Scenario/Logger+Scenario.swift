import Logging

extension Logger {
  /// The log of scenario runs: the run, the timeline, faults, clients' sessions (`doppel.scenario`).
  static let scenario = Logger(label: "doppel.scenario")
}
