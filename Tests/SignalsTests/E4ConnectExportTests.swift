import Foundation
import Signals
import Testing

@Suite struct E4ConnectExportTests {
  static let files: [String: String] = [
    "BVP.csv": "1594920460.000000\n64.000000\n-0.00\n1.25\n-3.50\n12.75\n",
    "EDA.csv": "1594920460.000000\n4.000000\n0.000000\n0.152000\n0.150720\n",
    "TEMP.csv": "1594920460.000000\n4.000000\n33.13\n33.13\n33.15\n",
    "ACC.csv": "1594920460.000000, 1594920460.000000, 1594920460.000000\n32.000000, 32.000000, 32.000000\n"
      + "-12,40,51\n-127,127,0\n64,-64,1\n",
    "HR.csv": "1594920470.000000\n1.000000\n71.00\n72.50\n",
    "IBI.csv": "1594920460.000000, IBI\n7.734375,0.875000\n8.593750,0.859375\n",
    "tags.csv": "1594920475.120000\n1594920490.500000\n",
  ]

  @Test func readsEveryFile() throws {
    let export = try E4ConnectExport(files: Self.files)
    let bvp = try #require(export.bvp)
    #expect(bvp.startTime == 1_594_920_460)
    #expect(bvp.sampleRate == 64)
    #expect(bvp.values == [0, 1.25, -3.5, 12.75])
    #expect(export.eda?.values == [0, 0.152, 0.15072])
    #expect(export.temperature?.values == [33.13, 33.13, 33.15])
    #expect(export.accelerationX?.values == [-12.0 / 64, -127.0 / 64, 1])
    #expect(export.accelerationY?.values == [40.0 / 64, 127.0 / 64, -1])
    #expect(export.accelerationZ?.values == [51.0 / 64, 0, 1.0 / 64])
    #expect(export.accelerationX?.sampleRate == 32)
    #expect(export.heartRate?.startTime == 1_594_920_470)
    #expect(export.heartRate?.values == [71, 72.5])
    #expect(
      export.interbeatIntervals
        == E4ConnectExport.InterbeatIntervals(
          startTime: 1_594_920_460,
          beats: [.init(offset: 7.734375, interval: 0.875), .init(offset: 8.59375, interval: 0.859375)]))
    #expect(export.tags == [1_594_920_475.12, 1_594_920_490.5])
    #expect(export.startTime == 1_594_920_460)
  }

  @Test func seriesReplayAsRecordedSignalsAlignedToTheExportStart() throws {
    let export = try E4ConnectExport(files: Self.files)
    var bvp = try #require(export.signals()["bvp"])
    #expect((0..<4).map { bvp.value(at: Double($0) / 64) } == [0, 1.25, -3.5, 12.75])
    #expect(bvp.value(at: 4.0 / 64) == nil, "ends after its last sample")
    var heartRate = try #require(export.heartRate).recordedSignal(from: export.startTime)
    #expect(heartRate.value(at: 10) == 71)
    #expect(heartRate.value(at: 11) == 72.5)
  }

  @Test func readsADirectoryAndSkipsMissingAndEmptyFiles() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "e4-export-\(UInt64.random(in: 0...UInt64.max))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try Self.files["EDA.csv"]!.write(to: directory.appendingPathComponent("EDA.csv"), atomically: true, encoding: .utf8)
    try "".write(to: directory.appendingPathComponent("IBI.csv"), atomically: true, encoding: .utf8)
    let export = try E4ConnectExport(directory: directory.path)
    #expect(export.eda?.values.count == 3)
    #expect(export.bvp == nil)
    #expect(export.interbeatIntervals == nil)
    #expect(throws: E4ConnectExportError.self) { try E4ConnectExport(directory: directory.path + "/nothing") }
  }

  /// The error for `text` as file `name`.
  func error(_ name: String, _ text: String) -> E4ConnectExportError? {
    do {
      _ = try E4ConnectExport(files: [name: text])
      return nil
    } catch {
      return error
    }
  }

  @Test func badInputNamesFileLineAndColumn() throws {
    let word = try #require(error("BVP.csv", "1594920460.0\n64.0\n1.5\nabc\n"))
    #expect((word.file, word.line, word.column) == ("BVP.csv", 4, 1))
    #expect(word.description.hasPrefix("BVP.csv:4:1: expected a number (a sample), found 'abc'"))

    let columns = try #require(error("ACC.csv", "1,1,1\n32,32,32\n1, 2, x\n"))
    #expect((columns.line, columns.column) == (3, 7))

    let short = try #require(error("ACC.csv", "1,1,1\n32,32,32\n1,2\n"))
    #expect((short.line, short.column) == (3, 4))
    #expect(short.message.contains("expected 3 fields"))

    let rate = try #require(error("EDA.csv", "1594920460\n0\n"))
    #expect((rate.line, rate.column) == (2, 1))
    #expect(rate.message.contains("sample rate must be positive"))

    let noRate = try #require(error("TEMP.csv", "1594920460\n"))
    #expect(noRate.line == 2)

    let header = try #require(error("IBI.csv", "1594920460, HR\n1,0.8\n"))
    #expect((header.line, header.column) == (1, 13))

    let backwards = try #require(error("IBI.csv", "1594920460, IBI\n2,0.8\n1.5,0.7\n"))
    #expect((backwards.line, backwards.column) == (3, 1))

    let tag = try #require(error("tags.csv", "1594920475.1\n\n  nope\n"))
    #expect((tag.line, tag.column) == (3, 3))

    let unknown = try #require(error("GYRO.csv", "1\n"))
    #expect(unknown.line == 0)
  }

  @Test func windowsLineEndingsAndBlankLinesAreFine() throws {
    let export = try E4ConnectExport(files: ["BVP.csv": "10\r\n64\r\n1\r\n\r\n2\r\n"])
    #expect(export.bvp?.values == [1, 2])
  }
}
