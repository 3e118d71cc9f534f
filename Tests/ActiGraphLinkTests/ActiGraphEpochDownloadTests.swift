import ActiGraphLink
import ActiGraphLinkSDK
import Foundation
import GATT
import Testing

/// Epoch downloads: every logged record arrives, with progress.
@Suite(.timeLimit(.minutes(2)))
struct ActiGraphEpochDownloadTests {
  static let request = #"{"epoch": {"startDateTime": "07-20-2015 04:00:00", "stopDateTime": "07-21-2015 03:59:00"}}"#

  func download(mtu: Int, failAt: Int? = nil) async throws -> (ActiGraphRig, ActiGraphLink, [AGMessage]) {
    let rig = try ActiGraphRig(mtu: mtu)
    let model = ActiGraphLink(configuration: .init(clockTime: 1_437_451_200, logHours: 24, seed: 7))
    try await rig.connect(model, mtu: mtu)
    if let failAt { await model.failNextDownload(atPercent: failAt) }
    let start = await rig.current().count
    await rig.sdk.configureDevice(Self.request)
    await rig.wait(upTo: .seconds(600)) {
      $0.dropFirst(start).contains {
        if case .epochs = $0.value { return true }
        return ActiGraphRig.errorCode($0) != nil
      }
    }
    return (rig, model, (await rig.current(from: start)))
  }

  @Test(arguments: [23, 185, 517])
  func aDayOfEpochsArrivesWhole(mtu: Int) async throws {
    let (_, model, messages) = try await download(mtu: mtu)
    let progress = messages.compactMap { message -> (AGDownloadState, Int)? in
      if case .epochDownload(let state, let progress) = message.value { return (state, progress) }
      return nil
    }
    #expect(progress.first.map { $0.0 == .started && $0.1 == 0 } == true)
    #expect(progress.last.map { $0.0 == .completed && $0.1 == 100 } == true)
    #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.1 < $1.1 })
    // Progress in steps of one batch: 1440 records in batches of 1 (MTU 23), 19 (185), 56 (517).
    #expect(progress.count >= (mtu == 517 ? 20 : 60))
    let expected = model.epochs(from: 1_437_364_800, to: 1_437_451_140)
    #expect(expected.count == 1440)
    guard case .epochs(let start, let stop, let records) = messages.last?.value else {
      Issue.record("no epochs: \(messages.last?.json ?? "nothing")")
      return
    }
    #expect(start == "07-20-2015 04:00:00" && stop == "07-21-2015 03:59:00")
    #expect(records.count == expected.count)
    #expect(
      records
        == expected.map {
          AGEpoch(
            timestamp: Int64($0.timestamp), xCounts: Int($0.xCounts), yCounts: Int($0.yCounts),
            zCounts: Int($0.zCounts), steps: Int($0.steps), heartRate: Int($0.heartRate),
            wearDetect: Int($0.wearDetect))
        })
    #expect(Set(records.map(\.wearDetect)) == [0, 1])
    #expect(await model.epochRecordsSent == 1440)
    // The JSON as documented.
    let json = try #require(ActiGraphRig.parsed(messages.last!.json)?["epoch"] as? NSDictionary)
    #expect(json["startdatetime"] as? String == "07-20-2015 04:00:00")
    let first = try #require((json["epochData"] as? [NSDictionary])?.first)
    let e = expected[0]
    #expect(
      first.isEqual(
        ActiGraphRig.parsed(
          """
          {"timestamp": "07-20-2015 04:00:00", "xCounts": \(e.xCounts), "yCounts": \(e.yCounts), "zCounts": \(e.zCounts),
           "steps": \(e.steps), "heartRate": \(e.heartRate), "wearDetect": \(e.wearDetect)}
          """)!))
    if mtu <= 185 {
      #expect(
        messages.contains {
          ActiGraphRig.matches($0, #"{"epochDownload": {"state": "downloading", "progress": 55}}"#)
        })
    }
  }

  /// Throughput of a day's download on the loopback (wall time; virtual
  /// time between batches is skipped), beside the batch layout's ideal.
  @Test func loopbackThroughput() async throws {
    let wall = ContinuousClock.now
    let (_, _, messages) = try await download(mtu: 247)
    let elapsed = ContinuousClock.now - wall
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    guard case .epochs(_, _, let records) = messages.last?.value else {
      Issue.record("no epochs")
      return
    }
    #expect(records.count == 1440)
    print(
      String(
        format: "actigraph-link loopback: %d epoch records in %.2f s wall = %.0f records/s (MTU 247, 27 records/batch)",
        records.count, seconds, Double(records.count) / seconds))
  }

  @Test func theDocumentedTwoMinuteExample() async throws {
    let rig = try ActiGraphRig()
    let model = ActiGraphLink(configuration: .init(clockTime: 1_437_451_200, logHours: 24))
    try await rig.connect(model)
    let start = await rig.current().count
    await rig.sdk.configureDevice(
      #"{"epoch": {"startDateTime": "07-21-2015 03:05:00", "stopDateTime": "07-21-2015 03:06:00"}}"#)
    let messages = await rig.wait {
      $0.dropFirst(start).contains { if case .epochs = $0.value { true } else { false } }
    }
    guard case .epochs(_, _, let records) = messages.last?.value else {
      Issue.record("no epochs")
      return
    }
    #expect(records.map(\.timestamp) == [1_437_447_900, 1_437_447_960])
    #expect(
      messages.dropFirst(start).first.map {
        ActiGraphRig.matches($0, #"{"epochDownload": {"state": "started", "progress": 0}}"#)
      } == true)
  }

  @Test func aTransferErrorAt55PercentIsCode6() async throws {
    let (_, model, messages) = try await download(mtu: 185, failAt: 55)
    let error = try #require(messages.last)
    #expect(ActiGraphRig.errorCode(error) == 6)
    #expect(
      ActiGraphRig.matches(
        error, #"{"error": {"code": 6, "description": "Wireless Tranfer Error", "extra": "at 55%"}}"#),
      "\(error.json)")
    #expect(!messages.contains { if case .epochs = $0.value { true } else { false } })
    #expect(await model.epochRecordsSent == 1440 * 55 / 100)
  }

  @Test func aCommandDuringADownloadFindsTheDeviceBusy() async throws {
    let rig = try ActiGraphRig(mtu: 23)
    let model = ActiGraphLink(configuration: .init(logHours: 24))
    try await rig.connect(model, mtu: 23)
    await rig.sdk.configureDevice(
      Self.request.replacingOccurrences(of: "07-20-2015 04:00:00", with: "07-20-2015 00:00:00"))
    await rig.clock.advance(by: .seconds(1))
    #expect(await model.isDownloading)
    await rig.sdk.configureDevice(#"{"raw": {"stream": true}}"#)
    let messages = await rig.wait(upTo: .seconds(600)) {
      $0.contains { if case .epochs = $0.value { true } else { false } }
    }
    #expect(messages.contains { ActiGraphRig.errorCode($0) == 11 })
    #expect(await model.answers.contains(.busy))
    #expect(await !model.isStreamingRaw)
  }

  @Test func theLogIsTheSameForTheSameSeed() {
    let a = ActiGraphLink(configuration: .init(seed: 3))
    let b = ActiGraphLink(configuration: .init(seed: 3))
    let c = ActiGraphLink(configuration: .init(seed: 4))
    #expect((0..<1440).map(a.epoch) == (0..<1440).map(b.epoch))
    #expect((0..<1440).map(a.epoch) != (0..<1440).map(c.epoch))
  }
}
