import BlueZ
import DBus
import E4
import E4Link
import GATT
import Signals
import Testing

extension LabTests {
  /// The emulated E4 on hci0 and the SDK-shaped client on hci1, through
  /// bluetoothd and the kernel's virtual controllers.
  @Suite
  struct E4LabTests {
    @Test(.timeLimit(.minutes(4)))
    func tenSecondsOfEveryStreamAtItsRate() async throws {
      let ppg = SyntheticPPG(heartRate: 75, amplitude: 70, seed: 21)
      let eda = SyntheticEDA(tonicLevel: 2.5, responses: [SkinConductanceResponse(onset: 4, amplitude: 0.4)], seed: 21)
      let temperature = TemperatureDrift(start: 33.2, noise: 0.02, seed: 21)
      let swing = SineSignal(amplitude: 0.4, frequency: 0.25)
      let model = E4(
        configuration: E4Configuration(serialNumber: "LAB001", batteryLevel: 0.9, ibiWarmUp: 3),
        bvp: ppg, eda: eda, temperature: temperature, accelerationX: swing)
      try await LabSession.run { lab in
        _ = try await lab.host(model, on: 0, name: "e4lab")
        let api = EmpaticaAPI(link: try await lab.central(on: 1))
        #expect(await api.authenticate(apiKey: "lab-key").success)
        var device: E4DeviceManager?
        for await event in try await api.discoverDevices(duration: .seconds(60)) {
          if case .found(let first) = event {
            device = first
            break
          }
        }
        let e4 = try #require(device, "no E4 found")
        #expect(e4.name == "Empatica E4")
        let streams = (
          bvp: StreamCollector(await e4.bvp()), gsr: StreamCollector(await e4.gsr()),
          temperature: StreamCollector(await e4.temperature()),
          acceleration: StreamCollector(await e4.acceleration()),
          ibi: StreamCollector(await e4.ibi()), battery: StreamCollector(await e4.batteryLevels()),
          tags: StreamCollector(await e4.tags())
        )
        let connectedAt = ContinuousClock.now
        try await e4.connect(timeout: .seconds(60))
        // The button halfway through the first 10 s of BVP, then until every
        // stream is past its first 10 s (samples are consecutive from the
        // session's start, checked below) and the tag and five IBIs are in.
        try #require(
          try await streams.bvp.wait(within: .seconds(60)) { $0.count >= 320 }, "no 5 s of BVP within 60 s")
        let tag = try #require(await model.pressButton())
        var waited = try await streams.bvp.wait(within: .seconds(60)) { $0.count > 640 }
        if waited { waited = try await streams.acceleration.wait(within: .seconds(10)) { $0.count > 320 } }
        if waited { waited = try await streams.gsr.wait(within: .seconds(10)) { $0.count > 40 } }
        if waited { waited = try await streams.temperature.wait(within: .seconds(10)) { $0.count > 40 } }
        if waited { waited = try await streams.ibi.wait(within: .seconds(30)) { $0.count >= 5 } }
        if waited { waited = try await streams.tags.wait(within: .seconds(10)) { !$0.isEmpty } }
        let counts = [
          "BVP \(streams.bvp.values.count)", "ACC \(streams.acceleration.values.count)",
          "EDA \(streams.gsr.values.count)", "TEMP \(streams.temperature.values.count)",
          "IBI \(streams.ibi.values.count)", "tags \(streams.tags.values.count)",
        ]
        #expect(waited, "streams after \(ContinuousClock.now - connectedAt): \(counts.joined(separator: ", "))")
        // What the model sampled for each stream, at the times it sampled them.
        var expected = (bvp: ppg, eda: eda, temperature: temperature, x: swing)
        var times: [E4Signal: [Double]] = [:]
        for (signal, count) in [(E4Signal.bvp, 640), (.eda, 40), (.temperature, 40), (.accelerationX, 320)] {
          var list: [Double] = []
          for n in 0..<count { list.append(try #require(await model.sourceTime(of: signal, sample: n))) }
          times[signal] = list
        }
        await e4.disconnect()
        let elapsed = ContinuousClock.now - connectedAt
        let t0 = try #require(await e4.sessionStart)

        /// The first `count` samples of the session: consecutive from t0 at the rate.
        func firstSeconds<T>(_ values: [T], rate: Double, _ timestamp: (T) -> Double) -> [T] {
          let first = Array(values.filter { timestamp($0) < t0 + 10 - 1e-9 })
          #expect(first.count == Int(rate * 10), "\(T.self) at \(rate) Hz: \(first.count) samples in 10 s")
          #expect(first.enumerated().allSatisfy { abs(timestamp($1) - (t0 + Double($0) / rate)) < 1e-9 }, "no gap")
          return first
        }
        let bvp = firstSeconds(await streams.bvp.all, rate: 64, \.timestamp)
        let gsr = firstSeconds(await streams.gsr.all, rate: 4, \.timestamp)
        let skin = firstSeconds(await streams.temperature.all, rate: 4, \.timestamp)
        let acceleration = firstSeconds(await streams.acceleration.all, rate: 32, \.timestamp)
        // The values the model sent, as the wire carries them.
        #expect(
          bvp.map(\.value) == times[.bvp]!.map { Double(E4Packet.bvpCode(expected.bvp.value(at: $0)!)) / 16 })
        #expect(
          gsr.map(\.value)
            == times[.eda]!.map { 1_000_000 / Double(E4Packet.edaCode(expected.eda.value(at: $0)!)) })
        #expect(
          skin.map(\.value)
            == times[.temperature]!.map {
              Double(E4Packet.temperatureCode(expected.temperature.value(at: $0)!)) * 0.02 - 275.54
            })
        #expect(
          acceleration.map(\.x) == times[.accelerationX]!.map { E4Packet.accelerationCode(expected.x.value(at: $0)!) })
        #expect(acceleration.allSatisfy { $0.y == 0 && $0.z == 64 })
        // Interbeat intervals after the (shortened) warm-up, near 75 bpm.
        let ibi = await streams.ibi.all
        #expect(ibi.count >= 5, "\(ibi.count) IBIs")
        #expect(ibi.allSatisfy { $0.timestamp >= t0 + 3 && abs(60 / $0.value - 75) < 8 })
        // Battery on connecting, the tag at the device's time.
        #expect(await streams.battery.all.first?.value == 0.9)
        #expect(await streams.tags.all.map(\.timestamp) == [tag])
        #expect(await e4.malformedPackets == 0)
        print(
          "lab e4: \(bvp.count) BVP, \(acceleration.count) ACC, \(gsr.count) EDA, \(skin.count) TEMP, "
            + "\(ibi.count) IBI in the first 10 s of \(elapsed) connected")
      }
    }

    /// Two wristbands stream every signal at once for 20 s (the scenario
    /// e4/two-wristbands.yaml does 60 s in CI too), each to its own
    /// client, with no gap: every sample's device timestamp is the session
    /// start plus its index over the rate. Each link has a controller at each
    /// end (hci0 and hci2 host, hci1 and hci3 connect): btvirt in BlueZ 5.66
    /// forwards ACL data under the sender's connection handle, so a second
    /// link on one controller gets the other side's handle wrong (docs/lab.md).
    @Test(.enabled(if: Lab.adapterNames.count >= 4, "needs four adapters"), .timeLimit(.minutes(5)))
    func twoWristbandsStreamTwentySecondsWithNoGap() async throws {
      try await LabSession.run { lab in
        async let first = Self.stream(
          lab: lab, name: "Empatica E4 A", serial: "LAB00A", host: 0, central: 1, seconds: 20)
        async let second = Self.stream(
          lab: lab, name: "Empatica E4 B", serial: "LAB00B", host: 2, central: 3, seconds: 20)
        let (a, b) = try await (first, second)
        print("lab two e4s, 20 s each: A \(a), B \(b)")
      }
    }

    /// Hosts one E4 on adapter `host`, streams it to an SDK client on
    /// `central` for `seconds`, and checks every stream for gaps.
    static func stream(
      lab: LabSession, name: String, serial: String, host: Int, central: Int, seconds: Int
    ) async throws -> String {
      let model = E4(
        configuration: E4Configuration(name: name, serialNumber: serial, batteryLevel: 0.9, ibiWarmUp: 3),
        bvp: SyntheticPPG(heartRate: 70, amplitude: 70, seed: 5), eda: ConstantSignal(2),
        temperature: ConstantSignal(33), accelerationX: SineSignal(amplitude: 0.5, frequency: 0.5))
      _ = try await lab.host(model, on: host, name: serial.lowercased())
      let api = EmpaticaAPI(link: try await lab.central(on: central))
      #expect(await api.authenticate(apiKey: "lab-key").success)
      var device: E4DeviceManager?
      for await event in try await api.discoverDevices(duration: .seconds(60), namePrefix: name) {
        if case .found(let match) = event, match.name == name {
          device = match
          break
        }
      }
      let e4 = try #require(device, "\(name) not found")
      let bvp = StreamCollector(await e4.bvp())
      let gsr = StreamCollector(await e4.gsr())
      let temperature = StreamCollector(await e4.temperature())
      let acceleration = StreamCollector(await e4.acceleration())
      try await e4.connect(timeout: .seconds(60))
      // Until every stream holds `seconds` of samples (bounded: a loaded
      // lab is slower to subscribe, never slower to stream).
      var waited = try await bvp.wait(within: .seconds(seconds + 60)) { $0.count >= 64 * seconds }
      if waited { waited = try await acceleration.wait(within: .seconds(10)) { $0.count >= 32 * seconds } }
      if waited { waited = try await gsr.wait(within: .seconds(10)) { $0.count >= 4 * seconds } }
      if waited { waited = try await temperature.wait(within: .seconds(10)) { $0.count >= 4 * seconds } }
      #expect(waited, "\(name): not \(seconds) s of every stream within \(seconds + 60) s")
      await e4.disconnect()
      let t0 = try #require(await e4.sessionStart)
      /// Samples are consecutive from the first: n-th at t0 + n / rate.
      func check(_ label: String, _ times: [Double], rate: Double) -> Int {
        let expected = Int(Double(seconds) * rate)
        #expect(times.count >= expected, "\(name) \(label): \(times.count) samples, expected at least \(expected)")
        let gaps = times.enumerated().filter { abs($1 - (t0 + Double($0) / rate)) > 1e-9 }
        #expect(gaps.isEmpty, "\(name) \(label): first gap at sample \(gaps.first?.offset ?? -1)")
        return times.count
      }
      let counts = [
        check("BVP", await bvp.all.map(\.timestamp), rate: 64),
        check("ACC", await acceleration.all.map(\.timestamp), rate: 32),
        check("EDA", await gsr.all.map(\.timestamp), rate: 4),
        check("TEMP", await temperature.all.map(\.timestamp), rate: 4),
      ]
      #expect(await e4.malformedPackets == 0)
      return "BVP \(counts[0]), ACC \(counts[1]), EDA \(counts[2]), TEMP \(counts[3])"
    }
  }
}
