// doppel-fuzz: every parser of outside input, fuzzed with a seeded,
// coverage-blind mutation loop (Benchmarks/Fuzzing), from the corpus in the
// repository. Prints, per target, the executions, their rate, the slowest
// one, hangs and crashes (a crash ends the run: the last "fuzzing" line
// names the target).
//
//   doppel-fuzz [--executions N] [--seed S] [--root DIR] [TARGET...]
import Foundation
import Fuzzing

var executions = 1_000_000
var seed: UInt64 = 1
var root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
var chosen: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
  switch argument {
  case "--executions": executions = arguments.popFirst().flatMap(Int.init) ?? executions
  case "--seed": seed = arguments.popFirst().flatMap { UInt64($0) } ?? seed
  case "--root": root = URL(fileURLWithPath: arguments.popFirst() ?? ".")
  case "-h", "--help":
    print("usage: doppel-fuzz [--executions N] [--seed S] [--root DIR] [TARGET...]")
    print("targets: " + FuzzTarget.all.map(\.name).joined(separator: ", "))
    exit(0)
  default: chosen.append(argument)
  }
}
let unknown = chosen.filter { name in !FuzzTarget.all.contains { $0.name == name } }
guard unknown.isEmpty else {
  FileHandle.standardError.write(Data("doppel-fuzz: unknown target(s) \(unknown.joined(separator: ", "))\n".utf8))
  exit(2)
}
let targets = chosen.isEmpty ? FuzzTarget.all : FuzzTarget.all.filter { chosen.contains($0.name) }
print("mutation loop (seeded, coverage-blind), seed \(seed), \(executions) executions per target")
func column(_ text: String, _ width: Int) -> String {
  text.count >= width ? text + " " : text.padding(toLength: width, withPad: " ", startingAt: 0)
}
print(
  column("target", 26)
    + ["corpus", "executions", "seconds", "per second", "slowest ms", "hangs", "crashes"]
    .map { String(repeating: " ", count: max(0, 11 - $0.count)) + $0 }.joined(separator: " "))
var failed = false
for target in targets {
  FileHandle.standardError.write(Data("fuzzing \(target.name): \(target.summary)\n".utf8))
  let run = await FuzzRun.run(target, root: root, executions: executions, seed: seed)
  let slowest = Double(run.slowest.components.attoseconds) / 1e15 + Double(run.slowest.components.seconds) * 1000
  let figures = [
    "\(run.corpus)", "\(run.executions)", String(format: "%.2f", run.seconds),
    String(format: "%.0f", Double(run.executions) / max(run.seconds, 1e-9)), String(format: "%.2f", slowest),
    "\(run.hangs)", "0",
  ]
  print(
    column(run.target, 26)
      + figures.map { String(repeating: " ", count: max(0, 11 - $0.count)) + $0 }.joined(separator: " "))
  if run.corpus == 0 || run.hangs > 0 { failed = true }
}
exit(failed ? 1 : 0)
