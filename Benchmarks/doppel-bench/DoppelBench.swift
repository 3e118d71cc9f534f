import Foundation

/// `doppel-bench`: benchmarks that print figures for a script to set beside a
/// peer's (ci/bench-dbus). One subcommand per benchmark.
@main
enum DoppelBench {
  static let usage = """
    usage: doppel-bench dbus --address ADDRESS [options]   (doppel-bench dbus --help for the options)
           doppel-bench clock [options]                    (doppel-bench clock --help for the options)
    """

  static func main() async {
    var arguments = CommandLine.arguments.dropFirst()
    switch arguments.popFirst() {
    case "dbus":
      if arguments.contains("--help") || arguments.contains("-h") {
        print(DBusBenchmarkOptions.usage)
        return
      }
      do {
        let options = try DBusBenchmarkOptions(parsing: Array(arguments))
        try await DBusBenchmark(options: options).run()
      } catch let error as UsageError {
        fail("doppel-bench dbus: \(error)\n\n\(DBusBenchmarkOptions.usage)", status: 2)
      } catch {
        fail("doppel-bench dbus: \(error)", status: 1)
      }
    case "clock":
      if arguments.contains("--help") || arguments.contains("-h") {
        print(ClockBenchmark.usage)
        return
      }
      do {
        try await ClockBenchmark(parsing: Array(arguments)).run()
      } catch {
        fail("doppel-bench clock: \(error)\n\n\(ClockBenchmark.usage)", status: 2)
      }
    case "-h", "--help", "help":
      print(usage)
    case let other?:
      fail("doppel-bench: unknown benchmark \(other)\n\(usage)", status: 2)
    case nil:
      fail(usage, status: 2)
    }
  }

  private static func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
  }
}
