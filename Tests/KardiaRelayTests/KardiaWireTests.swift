import BlendMicroClient
import Foundation
import Signals
import Testing

@testable import KardiaRelay

/// The analysis window and the Kardia events on the wire, without a network.
struct KardiaWireTests {
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

  static func packet(_ text: String) throws -> SocketIOPacket {
    try SocketIOPacket(text: text)
  }

  @Test func repliesAreReadAsTheAppReadThem() throws {
    #expect(
      KardiaWire.reply(try Self.packet(#"2["node.js",{"heartRate":"72","statusCode":"404"}]"#))
        == .analysis(KardiaAnalysis(statusCode: "404", heartRateText: "72")))
    #expect(
      KardiaWire.reply(
        try Self.packet(#"2["node.js",{"heartRate":"- -","statusCode":"0","time":"2025-06-15T15:06:40Z"}]"#))
        == .analysis(KardiaAnalysis(statusCode: "0", heartRateText: "- -", time: ECGFeed.epoch)))
    #expect(
      KardiaWire.reply(try Self.packet(#"2["/error",{"error":"missing key \"time\""}]"#))
        == .error("missing key \"time\""))
    // The app cast both values to strings: numbers are not what it read.
    let numeric = #"2["node.js",{"heartRate":70,"statusCode":200}]"#
    #expect(KardiaWire.reply(try Self.packet(numeric)) == .unreadable(numeric))
    #expect(KardiaWire.reply(try Self.packet(#"2["other",{}]"#)) == .unreadable(#"2["other",{}]"#))
  }

  @Test func eventsAreTheOnesTheAppAndServerExchanged() throws {
    let event = KardiaWire.sample(amplitude: "-0.125\r\n", time: ECGFeed.epoch + 0.25)
    #expect(event == #"42["message",{"amplitude":"-0.125\r\n","time":"2025-06-15T15:06:40.250Z"}]"#)
    let values = SyntheticECG(heartRate: 72).samples(0..<1000)
    let analysis = HeartRateAnalysis(times: values.indices.map { Double($0) / 100 }, amplitudes: values)
    let rate = try #require(analysis.heartRate)
    #expect(analysis.status == .normal)
    #expect(
      KardiaWire.analysis(analysis, time: ECGFeed.epoch).text
        == #"2["node.js",{"heartRate":"\#(Int(rate.rounded()))","statusCode":"200","time":"2025-06-15T15:06:40.000Z"}]"#
    )
    // No heart rate yet: the key is there, as the app's "- -" (it cast the value to a string).
    #expect(
      KardiaWire.analysis(HeartRateAnalysis(times: [], amplitudes: []), time: ECGFeed.epoch).text
        == #"2["node.js",{"heartRate":"- -","statusCode":"0","time":"2025-06-15T15:06:40.000Z"}]"#)
    #expect(KardiaWire.failure("no", event: "x").text == #"2["/error",{"error":"no","event":"x"}]"#)
    // What is written reads back as it was, the board's line end ignored.
    let packet = try SocketIOPacket(text: String(event.dropFirst()))
    let back = try KardiaWire.parseSample(try packet.event().arguments).get()
    #expect(KardiaWire.quickSample(event.dropFirst(2)) == (try packet.event().arguments))
    #expect(back.amplitude == -0.125 && back.time == ECGFeed.epoch + 0.25)
  }

  @Test func theStatusCodesAreTheAppsDictionary() {
    #expect(KardiaStatusCode.descriptions == ["0": "N/A", "200": "NSR", "404": "ARR"])
    for status in [HeartRateAnalysis.Status.insufficientData, .normal, .arrhythmia] {
      #expect(KardiaStatusCode.status(for: KardiaStatusCode.code(for: status)) == status)
    }
    #expect(KardiaStatusCode.code(for: .arrhythmia) == "404")
    #expect(KardiaStatusCode.status(for: "202") == nil)
  }

  @Test func theGraphKeepsTheLast15ValuesAsSent() {
    var graph = KardiaGraph()
    for n in 0..<20 { graph.append("\(n).5\r\n") }
    #expect(graph.points.count == 15)
    #expect(graph.points.first == "5.5\r\n")
    #expect(graph.values == (5..<20).map { Double($0) + 0.5 })
    graph.append("4.512.2553")  // the hardware's race the Kardia server guarded against
    graph.append("high")
    #expect(graph.values.suffix(2) == [4.512, 0])
  }
}
