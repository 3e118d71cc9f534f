import BlendMicro
import BlendMicroClient
import BlueZ
import DBus
import GATT
import Testing

extension LabTests {
  /// The Blend Micro on hci0 and its client on hci1, through bluetoothd and the
  /// kernel's virtual controllers.
  @Suite
  struct BlendMicroLabTests {
    @Test(.timeLimit(.minutes(3)))
    func tenSecondsOfECGWithNoGapAndTheRightHeartRate() async throws {
      let ecg = SyntheticECG(sampleRate: 50, heartRate: 72, noise: 0.01, seed: 3)
      let (peripheralBus, hci0) = try await Lab.adapter(0)
      let hosted = try await BlueZPeripheral.host(
        BlendMicro(ecg: ecg), on: hci0, bus: peripheralBus, name: "blend0")
      let (centralBus, hci1) = try await Lab.adapter(1)
      let client = BlendMicroClient(link: BlueZCentral(adapter: hci1, bus: centralBus))
      let found = try await client.connect(timeout: .seconds(60))
      #expect(found.id.rawValue == hci0.address)
      let readings = try await client.readings()
      var samples: [ECGSample] = []
      for try await reading in readings {
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
        times: samples.indices.map { Double($0) / ecg.sampleRate },
        amplitudes: samples.map(\.amplitude))
      let rate = try #require(analysis.heartRate)
      #expect(abs(rate - 72) <= 2, "heart rate \(rate)")
      print("lab: \(samples.count) samples in \(samples.last!.time), heart rate \(rate)")
      await client.disconnect()
      await hosted.stop()
      await peripheralBus.close()
      await centralBus.close()
    }
  }
}
