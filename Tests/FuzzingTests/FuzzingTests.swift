import Foundation
import Fuzzing
import Testing

/// A seconds-long version of `ci/bench-fuzz`: every parser of outside input,
/// 2,000 mutated inputs each (the benchmark runs a million). A crash fails
/// the whole test run; a hang (an input over a second) fails here.
@Suite(.timeLimit(.minutes(3)))
struct FuzzingTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  @Test(arguments: FuzzTarget.all.map(\.name))
  func survivesMutatedInput(_ name: String) async throws {
    let target = try #require(FuzzTarget.all.first { $0.name == name })
    let run = await FuzzRun.run(target, root: Self.root, executions: 2_000, seed: 20_261_124)
    #expect(run.corpus > 0, "no corpus for \(name)")
    #expect(run.hangs == 0, "\(run.hangs) inputs took over \(FuzzRun.hangLimit)")
  }

  @Test func theMutatorIsRepeatableForASeed() {
    var first = Mutator(corpus: [Array("abc".utf8)], seed: 7)
    var second = Mutator(corpus: [Array("abc".utf8)], seed: 7)
    #expect((0..<100).map { _ in first.next() } == (0..<100).map { _ in second.next() })
  }
}
