import BlendMicro
import BlendMicroClient
import BlueZ
import DBus
import GATT
import Signals
import Testing

extension LabTests {
  /// The Blend Micro on hci0 and its client on hci1, through bluetoothd and the
  /// kernel's virtual controllers.
  @Suite
  struct BlendMicroLabTests {
    @Test(.timeLimit(.minutes(3)))
    func tenSecondsOfECGWithNoGapAndTheRightHeartRate() async throws {
      let ecg = SyntheticECG(sampleRate: 50, heartRate: 72, noise: 0.01, seed: 3)
      try await LabSession.run { lab in
        _ = try await lab.host(BlendMicro(ecg: ecg), on: 0, name: "blend0")
        let client = try await lab.blendMicroClient(on: 1)
        let found = try await client.connect(timeout: .seconds(60))
        #expect(found.name == "BlendMicro")
        var samples: [ECGSample] = []
        for try await reading in try await client.readings() {
          guard case .sample(let sample) = reading else {
            Issue.record("malformed notification: \(reading)")
            continue
          }
          samples.append(sample)
          if samples.count >= Int(ecg.sampleRate) * 12 { break }
        }
        // No gap, no duplicate: the values are the model's sequence from its start.
        let expected = ecg.samples(0..<samples.count).map { Double(SyntheticECG.text($0))! }
        #expect(samples.map(\.amplitude) == expected)
        let analysis = HeartRateAnalysis(
          times: samples.indices.map { Double($0) / ecg.sampleRate }, amplitudes: samples.map(\.amplitude))
        let rate = try #require(analysis.heartRate)
        #expect(abs(rate - 72) <= 2, "heart rate \(rate)")
        print("lab: \(samples.count) samples in \(samples.last!.time), heart rate \(rate)")
      }
    }
  }
}
