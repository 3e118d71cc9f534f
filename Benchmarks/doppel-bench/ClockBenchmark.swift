import GATT
import Loopback
import Synchronization

/// `doppel-bench clock`: what one wake of a `VirtualClock` costs, and whether
/// the work it causes is done before time moves on, with the instant settled
/// two ways in one run: by a `LoopbackExecutor`'s quiet (every task on its
/// thread), and by counting `Task.yield` turns (every task on the global pool,
/// the clock without an executor).
///
/// The workload is a device's shape: a task wakes every 10 ms of virtual time
/// and hands a token down a chain of `hops` tasks (device, air, client, SDK,
/// observer: about four), each waiting on an `AsyncStream`.
struct ClockBenchmark {
  static let usage = """
    usage: doppel-bench clock [--wakes N] [--hops H,H,...] [--rounds R]
      --wakes N    wakes per measurement (default 100000)
      --hops H,…   tasks the token passes after each wake (default 4,16)
      --rounds R   rounds of every measurement, interleaved (default 3)
    Prints a Markdown table: per settle and chain length, the median cost of a
    wake and how many wakes had their chain done before time moved on.
    """

  var wakes = 100_000
  var hops = [4, 16]
  var rounds = 3

  init(parsing arguments: [String]) throws(UsageError) {
    var rest = arguments[...]
    while let flag = rest.popFirst() {
      guard let value = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
      switch flag {
      case "--wakes":
        guard let count = Int(value), count > 0 else { throw UsageError("--wakes needs a positive number") }
        wakes = count
      case "--hops":
        let counts = value.split(separator: ",").compactMap { Int($0) }
        guard !counts.isEmpty, counts.allSatisfy({ $0 >= 0 }) else {
          throw UsageError("--hops needs numbers ≥ 0, separated by commas")
        }
        hops = counts
      case "--rounds":
        guard let count = Int(value), count > 0 else { throw UsageError("--rounds needs a positive number") }
        rounds = count
      default:
        throw UsageError("unknown option \(flag)")
      }
    }
  }

  /// One measurement: microseconds per wake, and wakes whose chain was done when `advance` returned.
  private struct Figures {
    var microsecondsPerWake: Double
    var settled: Int
  }

  func run() async {
    var results: [String: [Figures]] = [:]
    for _ in 0..<rounds {
      for length in hops {
        for onExecutor in [true, false] {
          let figures = await measure(hops: length, onExecutor: onExecutor)
          results[Self.key(length, onExecutor), default: []].append(figures)
        }
      }
    }
    print("| settle | hops | µs per wake (median of \(rounds)) | wakes settled (worst round) |")
    print("|---|---|---|---|")
    for length in hops {
      for onExecutor in [true, false] {
        let figures = results[Self.key(length, onExecutor)] ?? []
        let costs = figures.map(\.microsecondsPerWake).sorted()
        let median = costs.isEmpty ? 0 : costs[costs.count / 2]
        let settled = figures.map(\.settled).min() ?? 0
        print(
          "| \(onExecutor ? "executor quiet" : "yield turns (pool)") | \(length) | "
            + "\((median * 100).rounded() / 100) | \(settled) of \(wakes) |")
      }
    }
  }

  private static func key(_ hops: Int, _ onExecutor: Bool) -> String { "\(hops) \(onExecutor)" }

  private func measure(hops: Int, onExecutor: Bool) async -> Figures {
    guard onExecutor else { return await measure(hops: hops, clock: VirtualClock()) }
    let executor = LoopbackExecutor()
    defer { executor.shutdown() }
    return await withTaskExecutorPreference(executor) {
      await measure(hops: hops, clock: VirtualClock(executor: executor))
    }
  }

  private func measure(hops: Int, clock: VirtualClock) async -> Figures {
    let arrived = Arrivals()
    let (first, start) = AsyncStream.makeStream(of: Void.self)
    var input = first
    var chain: [Task<Void, Never>] = []
    for _ in 0..<hops {
      let (next, forward) = AsyncStream.makeStream(of: Void.self)
      let from = input
      chain.append(
        Task(executorPreference: Task.currentExecutorPreference) {
          for await _ in from { forward.yield() }
          forward.finish()
        })
      input = next
    }
    let last = input
    chain.append(
      Task(executorPreference: Task.currentExecutorPreference) {
        for await _ in last { arrived.count.add(1, ordering: .relaxed) }
      })
    let wakes = self.wakes
    let ticker = Task(executorPreference: Task.currentExecutorPreference) {
      for _ in 0..<wakes {
        do { try await clock.sleep(for: .milliseconds(10)) } catch { break }
        start.yield()
      }
      start.finish()
    }
    while clock.sleeperCount == 0 { await Task.yield() }
    var settled = 0
    let begin = ContinuousClock.now
    for wake in 1...wakes {
      await clock.advance(by: .milliseconds(10))
      if arrived.count.load(ordering: .relaxed) == wake { settled += 1 }
    }
    let elapsed = ContinuousClock.now - begin
    // A settle that let time move on before the ticker slept again left it
    // behind: it would wait for wakes nobody makes.
    ticker.cancel()
    await ticker.value
    for task in chain { await task.value }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    return Figures(microsecondsPerWake: seconds * 1e6 / Double(wakes), settled: settled)
  }

  /// Tokens that reached the end of the chain.
  private final class Arrivals: Sendable {
    let count = Atomic(0)
  }
}
