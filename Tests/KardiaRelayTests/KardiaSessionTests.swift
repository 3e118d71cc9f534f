import BlendMicroClient
import Foundation
import Signals
import Testing

@testable import KardiaRelay

/// The server's per-connection logic and the wire format, without a network.
struct KardiaSessionTests {
  @Test func everyWindowPositionOfANormalRhythmIsNormal() {
    // A 10 s window opens anywhere in a beat (often in a T wave); the analysis
    // must not take the T wave before the first R peak for a beat.
    let ecg = SyntheticECG(heartRate: 72)
    let values = ecg.samples(0..<3000)
    var window = ECGWindow(length: .seconds(10))
    var statuses: [Int: HeartRateAnalysis.Status] = [:]
    for n in values.indices {
      try? window.append(amplitude: values[n], at: ECGFeed.epoch + Double(n) / 100)
      if n >= 1000, n % 7 == 0 {
        let analysis = window.analysis()
        statuses[n] = analysis.status
        #expect(abs((analysis.heartRate ?? 0) - 72) <= 2, "at sample \(n)")
      }
    }
    #expect(statuses.values.allSatisfy { $0 == .normal }, "\(statuses.filter { $0.value != .normal }.keys.sorted())")
  }

  @Test func theWindowKeepsItsLengthAndRefusesTimesGoingBack() throws {
    var window = ECGWindow(length: .seconds(2))
    for n in 0..<1000 { try window.append(amplitude: 0, at: ECGFeed.epoch + Double(n) / 100) }
    #expect(window.count == 201)
    #expect(throws: ECGWindow.OutOfOrder.self) { try window.append(amplitude: 0, at: ECGFeed.epoch) }
    #expect(window.count == 201)
  }

  @Test func analysesComeEveryIntervalAndRefusalsAtOnce() {
    var session = KardiaSession(window: .seconds(10), interval: 3)
    let event = { (n: Int) in KardiaWire.event(amplitude: 0, time: ECGFeed.epoch + Double(n) / 100) }
    #expect(session.receive(event(0)) == nil)
    #expect(session.receive("nope")?.contains("\"error\"") == true)
    #expect(session.receive(event(1)) == nil)
    #expect(
      session.receive(event(2)) == #"{"heartRate":null,"statusCode":0,"time":"2025-06-15T15:06:40.020Z"}"#)
    #expect(KardiaSession.binaryRefusal().contains("binary"))
  }

  @Test func timesTravelAsUTCMillisecondsRounded() throws {
    #expect(KardiaWire.format(ECGFeed.epoch) == "2025-06-15T15:06:40.000Z")
    // 0.01 is not exact in binary: rounding, not truncation, keeps it 010.
    #expect(KardiaWire.format(ECGFeed.epoch + 0.01) == "2025-06-15T15:06:40.010Z")
    #expect(KardiaWire.format(ECGFeed.epoch + 59.9996) == "2025-06-15T15:07:40.000Z")
    for n in 0..<3000 {
      let time = ECGFeed.epoch + Double(n) / 100
      let back = try #require(KardiaWire.parseTime(KardiaWire.format(time)))
      #expect(abs(back.timeIntervalSince(time)) < 0.0005)
    }
    #expect(KardiaWire.parseTime("2025-06-15T15:06:40Z") == ECGFeed.epoch)
    #expect(KardiaWire.parseTime("2025-06-15T16:06:40.5+01:00") == ECGFeed.epoch + 0.5)
    #expect(KardiaWire.parseTime("2025-06-15 15:06:40Z") == nil)
    #expect(KardiaWire.parseTime("") == nil)
  }

  @Test func repliesAreReadAsTheAppReadThem() {
    #expect(
      KardiaWire.reply(#"{"heartRate": 71.5, "statusCode": 2}"#)
        == .analysis(KardiaAnalysis(heartRate: 71.5, status: .arrhythmia)))
    #expect(
      KardiaWire.reply(#"{"heartRate": null, "statusCode": 0, "time": "2025-06-15T15:06:40Z"}"#)
        == .analysis(KardiaAnalysis(heartRate: nil, status: .insufficientData, time: ECGFeed.epoch)))
    #expect(KardiaWire.reply(#"{"error": "missing key \"time\""}"#) == .error("missing key \"time\""))
    #expect(KardiaWire.reply(#"{"heartRate": 70, "statusCode": 9}"#) == .unreadable(#"{"heartRate": 70, "statusCode": 9}"#))
    #expect(KardiaWire.reply("ok") == .unreadable("ok"))
  }
}
