/// A command line `doppel-bench` cannot run: printed with the usage text, exit status 2.
struct UsageError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) { self.description = description }
}
