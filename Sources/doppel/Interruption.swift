import Dispatch
import Foundation

/// Waits for SIGINT or SIGTERM (or a time limit), so that a command can
/// unregister from BlueZ cleanly instead of dying mid-way.
enum Interruption {
  static func wait(upTo seconds: Double?) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let queue = DispatchQueue(label: "doppel.signals")
      let once = Once(continuation)
      let sources = [SIGINT, SIGTERM].map { signal in
        Foundation.signal(signal, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
        source.setEventHandler { once.fire() }
        source.resume()
        return source
      }
      once.keep(sources)
      if let seconds {
        queue.asyncAfter(deadline: .now() + seconds) { once.fire() }
      }
    }
  }

  /// Resumes the continuation once; keeps the signal sources alive meanwhile.
  private final class Once: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?
    private var sources: [DispatchSourceSignal] = []

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

    func keep(_ sources: [DispatchSourceSignal]) {
      lock.withLock { self.sources = sources }
    }

    func fire() {
      let pending = lock.withLock {
        defer { continuation = nil }
        return continuation
      }
      pending?.resume()
    }
  }
}
