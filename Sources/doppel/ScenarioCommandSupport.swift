import ArgumentParser
import DoppelKit
import Foundation

/// Where scenarios run: the transport options of `doppel run`, `e2e` and `test`.
struct TransportOptions: ParsableArguments {
  @Flag(help: "Run in process in virtual time (the loopback) instead of over BlueZ.")
  var loopback = false

  @Option(
    help: ArgumentHelp(
      "The adapters this run may use (hci names or addresses, comma-separated).",
      discussion: """
        Devices without an 'adapter' go to the first, clients to the others; a device placed outside them is \
        an error. Default: every adapter. Runs with disjoint adapters can share one bluetoothd.
        """))
  var adapters: String?

  @Option(
    help: ArgumentHelp(
      "Adapters the clients may use (hci names or addresses, comma-separated).",
      discussion: "Default: every adapter that hosts no device."))
  var centralAdapters: String?

  @Flag(
    help: ArgumentHelp(
      "Send every notification as a D-Bus signal (PropertiesChanged), not on a socket BlueZ acquires.",
      discussion: "For comparisons: by default devices offer BlueZ AcquireNotify."))
  var noNotificationSockets = false

  func transport() -> any ScenarioTransport {
    if loopback { return LoopbackTransport() }
    return bluezTransport()
  }

  func bluezTransport() -> BlueZTransport {
    BlueZTransport(
      adapters: adapters.map(Self.list), centralAdapters: centralAdapters.map(Self.list),
      notificationSockets: !noNotificationSockets)
  }

  private static func list(_ text: String) -> [String] {
    text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
  }
}

/// The scenarios a command runs: files and folders of them, optionally one
/// shard of the lot, so a CI system's job matrix can split a large suite.
struct ScenarioSelection: ParsableArguments {
  @Argument(help: "Scenario files (YAML), or folders of them (every .yaml inside, recursively).")
  var paths: [String] = []

  @Option(
    help: ArgumentHelp(
      "Run only shard K of N (1-based), e.g. 2/4: every Nth scenario of the sorted list, starting at the Kth.",
      valueName: "K/N"))
  var shard: String?

  func validate() throws {
    if paths.isEmpty { throw ValidationError("give a scenario file or a folder of them") }
    if let shard { _ = try Self.shard(shard) }
  }

  static func shard(_ text: String) throws -> (index: Int, count: Int) {
    let parts = text.split(separator: "/")
    guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, (1...n).contains(k) else {
      throw ValidationError("--shard takes K/N with 1 ≤ K ≤ N, e.g. 1/4; not '\(text)'")
    }
    return (k, n)
  }

  /// The scenario files chosen: folders expanded, sorted, then this shard's.
  func files() throws -> [String] {
    var files: [String] = []
    for path in paths {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
        printError("\(path): error: no such file or folder")
        throw ExitCode(2)
      }
      if isFolder.boolValue {
        let found = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? [])
          .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
        if found.isEmpty {
          printError("\(path): error: the folder has no scenario files (.yaml)")
          throw ExitCode(2)
        }
        files += found.map { (path as NSString).appendingPathComponent($0) }
      } else {
        files.append(path)
      }
    }
    guard let shard else { return files }
    let (index, count) = try Self.shard(shard)
    return files.enumerated().filter { $0.offset % count == index - 1 }.map(\.element)
  }

  /// The chosen scenarios, or exit status 2 with every problem printed.
  func load() throws -> [Scenario] {
    var scenarios: [Scenario] = []
    var invalid = false
    for file in try files() {
      do {
        scenarios.append(try DeviceCatalog.parser.parse(file: file))
      } catch {
        printError(error.description)
        invalid = true
      }
    }
    if invalid { throw ExitCode(2) }
    return scenarios
  }
}

/// The files `e2e` and `test` can write beside their output.
struct ReportOptions: ParsableArguments {
  @Option(help: "Also write the results as JUnit XML to this file.")
  var junit: String?

  @Option(
    help: "Also write a self-contained web page of the run: streams plotted, faults, the central's actions, verdicts."
  )
  var report: String?
}

/// Writes a report file, or fails the command saying why.
enum ReportFile {
  static func write(_ text: String, to path: String) throws {
    do {
      try text.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
      printError("cannot write the report to \(path): \(error.localizedDescription)")
      throw ExitCode.failure
    }
  }
}

/// Prints to standard error.
func printError(_ text: String) {
  FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// The end-of-run summary: per device what arrived, faults applied, expectations.
enum ScenarioSummary {
  /// What a device saw its centrals do, in a line.
  static func describe(_ activity: CentralActivity) -> String {
    var parts: [String] = []
    let connections = activity.connections
    if let first = connections.first {
      parts.append(
        String(format: "%d connection(s), the first after %.3f s", connections.count, first.connectedAt)
          + (first.mtu.map { ", MTU \($0)" } ?? ""))
    } else {
      parts.append("no connection")
    }
    let subscribed = activity.subscriptions.filter(\.subscribed).map(\.characteristic)
    if !subscribed.isEmpty {
      var seen: [String] = []
      for name in subscribed where !seen.contains(name) { seen.append(name) }
      parts.append("subscribed to " + seen.joined(separator: ", "))
    }
    let reads = activity.accesses.filter { $0.kind == .read }.count
    let writes = activity.accesses.count - reads + activity.moreAccesses
    if reads + writes > 0 { parts.append("\(reads) reads, \(writes) writes") }
    let errors = activity.attErrors.count
    if errors > 0 { parts.append("\(errors) ATT errors answered") }
    var firmware: [String: Int] = [:]
    for event in activity.firmwareEvents { firmware[event.name, default: 0] += 1 }
    if !firmware.isEmpty {
      parts.append(
        "firmware: " + firmware.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)×" }.joined(separator: ", "))
    }
    return parts.joined(separator: "; ")
  }

  static func print(_ report: ScenarioReport, scenario: Scenario) {
    Swift.print(
      String(
        format: "summary: '%@' ran %@ of scenario time in %.2f s wall", report.scenario,
        ScenarioDuration.format(report.elapsed), report.wallTime.seconds))
    for device in scenario.devices {
      var line = "  \(device.id) (\(device.model))"
      if let observed = report.observations[device.id] {
        for (stream, stats) in observed.streams.sorted(by: { $0.key < $1.key }) {
          line += "\n    \(stream): \(stats.count) samples"
          if let rate = stats.rate { line += String(format: " at %.2f/s", rate) }
          if let mean = stats.mean {
            line += String(format: ", min %.4g max %.4g mean %.4g", stats.minimum, stats.maximum, mean)
          }
        }
        for (name, value) in observed.metrics.sorted(by: { $0.key < $1.key }) {
          line += String(format: "\n    %@: %.4g", name, value)
        }
        if !observed.events.isEmpty {
          line +=
            "\n    events: "
            + observed.events.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)×" }.joined(separator: ", ")
        }
        if !observed.errors.isEmpty {
          line += "\n    errors: \(observed.errors.count + observed.moreErrors), first: \(observed.errors[0])"
        }
      }
      if let activity = report.activity[device.id] {
        line += "\n    the device saw: " + describe(activity)
        for (at, event) in activity.hostEvents {
          line += String(format: "\n    host event at %.3f s: ", at) + event.description
        }
      }
      if let faults = report.faults[device.id], faults.dropped + faults.corrupted + faults.rejectedWrites > 0 {
        line +=
          "\n    faults: \(faults.dropped) dropped, \(faults.corrupted) corrupted, \(faults.rejectedWrites) writes rejected"
      }
      Swift.print(line)
    }
    for result in report.results {
      Swift.print(
        "  \(result.verdict) \(result.expectation.device): \(result.expected) — observed \(result.observed)"
          + (result.held ? "" : " (\(result.expectation.location))")
          + (result.notChecked.map { " — not checked: \($0)" } ?? ""))
    }
  }
}
