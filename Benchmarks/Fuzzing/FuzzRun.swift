import Foundation

/// One target fuzzed for a number of executions: the figures a fuzzing
/// benchmark prints. A crash ends the process (it is printed before each
/// target starts, so the log says which); an execution slower than
/// `hangLimit` counts as a hang.
public struct FuzzRun: Sendable {
  public let target: String
  public let corpus: Int
  public let executions: Int
  public let seconds: Double
  public let slowest: Duration
  public let hangs: Int

  public static let hangLimit: Duration = .seconds(1)

  public static func run(_ target: FuzzTarget, root: URL, executions: Int, seed: UInt64) async -> FuzzRun {
    let corpus = target.corpus(root)
    var mutator = Mutator(corpus: corpus, seed: seed)
    let clock = ContinuousClock()
    let start = clock.now
    var slowest: Duration = .zero
    var hangs = 0
    // The corpus as it is, then mutations.
    for input in corpus { await target.run(input) }
    for _ in 0..<executions {
      let input = mutator.next()
      let began = clock.now
      await target.run(input)
      let took = clock.now - began
      if took > slowest { slowest = took }
      if took > hangLimit { hangs += 1 }
    }
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return FuzzRun(
      target: target.name, corpus: corpus.count, executions: executions, seconds: seconds, slowest: slowest,
      hangs: hangs)
  }
}
