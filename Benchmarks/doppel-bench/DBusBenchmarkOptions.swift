/// The command line of `doppel-bench dbus`, parsed by hand (the target depends on DBus only).
struct DBusBenchmarkOptions: Sendable {
  /// The workloads, in the order they run.
  enum Workload: String, CaseIterable, Sendable {
    /// `Ping(u) -> u`, called and awaited one at a time.
    case call
    /// `PropertiesChanged` with an `ay` value one way, the same value echoed back the other way.
    case signal
    /// `PropertiesChanged` one way, in batches: the next batch is sent once the whole last one arrived.
    case stream
  }

  static let usage = """
    usage: doppel-bench dbus --address ADDRESS [--seconds N | --count N] [--payload BYTES]
                             [--warmup N] [--batch N] [--only WORKLOAD[,WORKLOAD…]]
                             [--isolated | --on-thread]

    D-Bus round trips between two connections of this process on the bus at ADDRESS
    (e.g. unix:path=/tmp/bus). Prints one `dbus.FIGURE VALUE` line per figure.

      --address ADDRESS  the bus (a private dbus-daemon; ci/bench-dbus starts one)
      --seconds N        measure each workload for N seconds (default 5)
      --count N          measure each workload for N round trips (signals, for stream)
      --payload BYTES    size of the `ay` property value (default 512, at least 4)
      --warmup N         round trips before measuring each workload (default 500)
      --batch N          signals per batch in the stream workload (default 64)
      --only LIST        some of: call, signal, stream (default all three)
      --isolated         run the benchmark's loops on the connections' executors, with no
                         hop between a task and a connection's queue per message
      --on-thread        run them nonisolated on the connections' threads, as tasks that
                         prefer them (DBusConnection.taskExecutor): a reply resumes its
                         caller on the thread that read it
    """

  var address = ""
  var budget = BenchBudget.seconds(5)
  var payload = 512
  var warmup = 500
  var batch = 64
  var workloads = Workload.allCases
  var isolated = false
  var onThread = false

  init(parsing arguments: [String]) throws(UsageError) {
    var rest = arguments[...]
    var sawAddress = false
    var sawBudget = false
    func value(_ option: String) throws(UsageError) -> String {
      guard let value = rest.popFirst(), !value.hasPrefix("--") else { throw UsageError("\(option) needs a value") }
      return value
    }
    func number(_ option: String, minimum: Int) throws(UsageError) -> Int {
      let text = try value(option)
      guard let number = Int(text), number >= minimum else {
        throw UsageError("\(option) takes a whole number of at least \(minimum), not \(text)")
      }
      return number
    }
    while let option = rest.popFirst() {
      switch option {
      case "--address":
        address = try value(option)
        sawAddress = true
      case "--seconds":
        guard !sawBudget else { throw UsageError("give --seconds or --count, once") }
        let text = try value(option)
        guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
          throw UsageError("--seconds takes a positive number, not \(text)")
        }
        budget = .seconds(seconds)
        sawBudget = true
      case "--count":
        guard !sawBudget else { throw UsageError("give --seconds or --count, once") }
        budget = .count(try number(option, minimum: 1))
        sawBudget = true
      case "--payload": payload = try number(option, minimum: 4)
      case "--warmup": warmup = try number(option, minimum: 0)
      case "--batch": batch = try number(option, minimum: 1)
      case "--isolated": isolated = true
      case "--on-thread": onThread = true
      case "--only":
        let names = try value(option).split(separator: ",", omittingEmptySubsequences: false)
        var chosen: [Workload] = []
        for name in names {
          guard let workload = Workload(rawValue: String(name)) else {
            throw UsageError("unknown workload \(name) (call, signal, stream)")
          }
          chosen.append(workload)
        }
        workloads = Workload.allCases.filter(chosen.contains)
      default:
        throw UsageError("unknown option \(option)")
      }
    }
    guard sawAddress else { throw UsageError("--address is required") }
    guard !(isolated && onThread) else { throw UsageError("give --isolated or --on-thread, not both") }
  }
}
