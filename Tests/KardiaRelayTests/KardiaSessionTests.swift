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
    #expect(
      KardiaWire.reply(#"{"heartRate": 70, "statusCode": 9}"#) == .unreadable(#"{"heartRate": 70, "statusCode": 9}"#))
    #expect(KardiaWire.reply("ok") == .unreadable("ok"))
  }

  /// `text` parsed as a JSON object, for comparing messages whatever their key order and spacing.
  static func object(_ text: String) throws -> NSDictionary {
    try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary, "\(text)")
  }

  @Test func messagesAreTheJSONObjectsTheAppAndServerExchanged() throws {
    let event = KardiaWire.event(amplitude: -0.125, time: ECGFeed.epoch + 0.25)
    #expect(try Self.object(event) == ["amplitude": -0.125, "time": "2025-06-15T15:06:40.250Z"] as NSDictionary)
    let times = (0..<6).map { Double($0) * 0.8 }
    let analysis = HeartRateAnalysis(times: times, amplitudes: times.map { _ in 1 })
    let reply = KardiaWire.analysis(analysis, time: ECGFeed.epoch)
    let parsed = try Self.object(reply)
    #expect(Set(parsed.allKeys.compactMap { $0 as? String }) == ["heartRate", "statusCode", "time"])
    #expect(parsed["statusCode"] as? Int == analysis.status.rawValue)
    #expect(parsed["time"] as? String == "2025-06-15T15:06:40.000Z")
    // No heart rate yet: the key is there, as null.
    let empty = try Self.object(KardiaWire.analysis(HeartRateAnalysis(times: [], amplitudes: []), time: ECGFeed.epoch))
    #expect(empty["heartRate"] is NSNull)
    #expect(empty["statusCode"] as? Int == 0)
    let failure = try Self.object(KardiaWire.failure("missing key \"time\""))
    #expect(failure == ["error": "missing key \"time\""] as NSDictionary)
    // What is written reads back as it was.
    let back = try KardiaWire.parseEvent(event).get()
    #expect(back.amplitude == -0.125 && back.time == ECGFeed.epoch + 0.25)
    #expect(
      KardiaWire.reply(#"{"heartRate":72.5,"statusCode":1,"time":"2025-06-15T15:06:40.000Z"}"#)
        == .analysis(KardiaAnalysis(heartRate: 72.5, status: .normal, time: ECGFeed.epoch)))
  }
}
