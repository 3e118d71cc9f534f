import ActiGraphLink
import ActiGraphLinkSDK
import BlueZ
import Foundation
import GATT
import Signals
import Synchronization
import Testing

extension LabTests {
  /// The emulated ActiGraph Link on hci0 and the SDK-shaped client on hci1,
  /// through bluetoothd and the kernel's virtual controllers.
  @Suite
  struct ActiGraphLinkLabTests {
    @Test(.timeLimit(.minutes(5)))
    func enumerateConnectStreamRawAndDownloadEpochs() async throws {
      let model = ActiGraphLink(
        configuration: ActiGraphLinkConfiguration(
          serialNumber: "TAS1A14758923", clockTime: 1_437_451_200, logHours: 24, seed: 9, rawRate: 30),
        accelerationX: SineSignal(amplitude: 0.5, frequency: 1), accelerationZ: ConstantSignal(1))
      try await LabSession.run { lab in
        _ = try await lab.host(model, on: 0, name: "actigraph")
        let sdk = AGDeviceSDK(link: try await lab.central(on: 1), clock: ContinuousClock())
        let log = Log()
        let collector = Task { for await message in sdk.messages { log.append(message) } }
        defer { collector.cancel() }
        func wait(_ seconds: Double, until condition: @escaping ([AGMessage]) -> Bool) async throws {
          let deadline = ContinuousClock.now + .seconds(seconds)
          while !condition(log.messages), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
          }
        }

        // Enumerate until found.
        await sdk.enumerateDevices(60)
        try await wait(60) { $0.contains { if case .deviceFound("TAS1A14758923") = $0.value { true } else { false } } }
        await sdk.cancelEnumeration()
        #expect(await sdk.foundDevices.contains("TAS1A14758923"))

        // Connect.
        await sdk.connectToDevice("TAS1A14758923")
        #expect(await sdk.getConnectedDevice() == "TAS1A14758923", "\(log.messages.map(\.json))")
        try #require(await sdk.getConnectedDevice() != nil)
        await sdk.getDeviceStatus()
        try await wait(10) { $0.contains(where: { $0.isStatus }) }
        #expect(log.messages.contains(where: { $0.isStatus }))

        // Raw data until 5 s of it at 30 Hz have arrived (bounded: a loaded
        // lab may be slow to configure, never to stream), then off.
        let beforeRaw = log.messages.count
        func rawSamples(_ messages: some Sequence<AGMessage>) -> [AGAcceleration] {
          messages.flatMap { message -> [AGAcceleration] in
            if case .raw(_, _, let acceleration, _, _) = message.value { return acceleration }
            return []
          }
        }
        await sdk.configureDevice(#"{"raw": {"stream": true}}"#)
        try await wait(60) { rawSamples($0.dropFirst(beforeRaw)).count >= 150 }
        await sdk.configureDevice(#"{"raw": {"stream": false}}"#)
        try await wait(10) {
          $0.dropFirst(beforeRaw).contains { if case .rawConfigured(false) = $0.value { true } else { false } }
        }
        let raw = rawSamples(log.messages.dropFirst(beforeRaw))
        #expect(raw.count >= 150, "\(raw.count) raw samples, 5 s at 30 Hz wanted within 60 s")
        #expect(raw.count == (await model.rawSamplesSent))
        #expect(raw.allSatisfy { $0.z == 1 && $0.y == 0 })

        // An hour of epochs, then a day (throughput).
        for (hours, from, to) in [
          // The clock is 07-21-2015 04:00:00 UTC: the log runs from 07-20 04:00 to 07-21 03:59.
          (1, "07-21-2015 02:00:00", "07-21-2015 02:59:00"), (24, "07-20-2015 04:00:00", "07-21-2015 03:59:00"),
        ] {
          let before = log.messages.count
          let started = ContinuousClock.now
          await sdk.configureDevice(#"{"epoch": {"startDateTime": "\#(from)", "stopDateTime": "\#(to)"}}"#)
          try await wait(120) {
            $0.dropFirst(before).contains {
              if case .epochs = $0.value { return true }
              if case .error = $0.value { return true }
              return false
            }
          }
          let elapsed = ContinuousClock.now - started
          let messages = Array(log.messages.dropFirst(before))
          guard case .epochs(_, _, let records) = messages.last?.value else {
            Issue.record("no epochs: \(messages.last?.json ?? "nothing")")
            continue
          }
          let first = AGDateTime.parse(from)!
          let expected = model.epochs(from: UInt32(first), to: UInt32(first + Int64(hours * 3600 - 60)))
          #expect(records.count == hours * 60)
          #expect(records.map(\.xCounts) == expected.map { Int($0.xCounts) })
          #expect(records.map(\.timestamp) == expected.map { Int64($0.timestamp) })
          let progress = messages.compactMap { message -> Int? in
            if case .epochDownload(_, let progress) = message.value { return progress }
            return nil
          }
          #expect(progress.first == 0 && progress.last == 100)
          #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 < $1 })
          let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
          print(
            String(
              format: "actigraph-link lab: %d epoch records in %.2f s = %.0f records/s", records.count, seconds,
              Double(records.count) / seconds))
        }
        await sdk.disconnectFromDevice()
        // The SDK delivers its messages on a stream: the last one may still be on its way.
        let disconnected = { (message: AGMessage?) in
          message.map { if case .deviceDisconnected = $0.value { true } else { false } } == true
        }
        try await wait(10) { disconnected($0.last) }
        #expect(disconnected(log.messages.last), "\(log.messages.suffix(3).map(\.json))")
      }
    }

    /// Messages the SDK delivered, shared with the test.
    final class Log: Sendable {
      private let items = Mutex<[AGMessage]>([])
      func append(_ message: AGMessage) { items.withLock { $0.append(message) } }
      var messages: [AGMessage] { items.withLock { $0 } }
    }
  }
}
