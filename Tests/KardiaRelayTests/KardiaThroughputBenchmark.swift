import BlendMicroClient
import Foundation
import KardiaRelay
import Signals
import Testing

/// Events per second from the relay through the analysis server, for
/// docs/benchmarks.md: `DOPPEL_BENCH_KARDIA=1 swift test --filter KardiaThroughputBenchmark`.
/// It uses only what the plain-WebSocket relay had too (`connect`,
/// `send(contentsOf:)`, `analyses`), so the same file measures both.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["DOPPEL_BENCH_KARDIA"] == "1", "a benchmark"), .serialized)
struct KardiaThroughputBenchmark {
  @Test(arguments: [10, 1000])
  func eventsPerSecond(analysisInterval: Int) async throws {
    let count = 20_000
    let values = SyntheticECG(heartRate: 72).samples(0..<count)
    let samples = values.enumerated().map { n, value in
      ECGSample(time: .seconds(Double(n) / 100), amplitude: value)
    }
    for round in 1...3 {
      try await TestServer.with(.init(analysisInterval: analysisInterval)) { server in
        let relay = try await KardiaRelay.connect(host: "127.0.0.1", port: server.port, epoch: ECGFeed.epoch)
        let clock = ContinuousClock()
        let started = clock.now
        async let sending: Void = {
          for batch in stride(from: 0, to: count, by: 100) {
            try await relay.send(contentsOf: Array(samples[batch..<batch + 100]))
          }
        }()
        var analyses = 0
        for try await _ in relay.analyses {
          analyses += 1
          if analyses == count / analysisInterval { break }
        }
        try await sending
        let seconds =
          Double(started.duration(to: clock.now).components.attoseconds) / 1e18
          + Double(started.duration(to: clock.now).components.seconds)
        print(
          "kardia-throughput interval=\(analysisInterval) round=\(round) events=\(count) "
            + "seconds=\(String(format: "%.3f", seconds)) events_per_s=\(Int(Double(count) / seconds))")
        #expect(analyses == count / analysisInterval)
        await relay.close()
      }
    }
  }
}
