/// A workload saw something it did not send: a wrong reply, a lost or reordered signal.
struct BenchFailure: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) { self.description = description }
}
