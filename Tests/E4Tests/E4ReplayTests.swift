import E4
import E4Link
import Foundation
import GATT
import Signals
import Testing

/// A small E4 Connect export, written by the test, replayed through the
/// emulated wristband to the client.
@Suite(.timeLimit(.minutes(1)))
struct E4ReplayTests {
  let rig = E4Rig()
  static let start = 1_594_920_460.0

  /// Ten seconds of a session, in E4 Connect's format.
  static func writeExport(to directory: URL) throws {
    func file(_ name: String, _ rows: [String]) throws {
      try (rows.joined(separator: "\n") + "\n").write(
        to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }
    let t0 = String(format: "%.6f", start)
    try file("BVP.csv", [t0, "64.000000"] + (0..<640).map { String(format: "%.4f", bvp($0)) })
    try file("EDA.csv", [t0, "4.000000"] + (0..<40).map { String(format: "%.6f", eda($0)) })
    try file("TEMP.csv", [t0, "4.000000"] + (0..<40).map { String(format: "%.2f", temperature($0)) })
    try file(
      "ACC.csv",
      ["\(t0), \(t0), \(t0)", "32.000000, 32.000000, 32.000000"]
        + (0..<320).map { "\(acceleration($0, axis: 0)),\(acceleration($0, axis: 1)),\(acceleration($0, axis: 2))" })
    try file("HR.csv", [String(format: "%.6f", start + 10), "1.000000"])
    try file("IBI.csv", ["\(t0), IBI", "1.250000,0.812500", "2.062500,0.812500"])
    try file("tags.csv", [String(format: "%.6f", start + 3.5), String(format: "%.6f", start + 7.25)])
  }

  static func bvp(_ n: Int) -> Double { Double((n * 37) % 800 - 400) / 16 }
  static func eda(_ n: Int) -> Double { 0.4 + Double(n) * 0.013 }
  static func temperature(_ n: Int) -> Double { 32 + Double(n % 9) * 0.02 }
  /// Counts (1/64 g) sweeping the whole int8 range.
  static func acceleration(_ n: Int, axis: Int) -> Int { (n * (5 + axis * 3) + axis * 40) % 256 - 128 }

  @Test func aRecordedSessionStreamsItsValues() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "e4-replay-\(UInt64.random(in: 0...UInt64.max))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try Self.writeExport(to: directory)

    let export = try E4ConnectExport(directory: directory.path)
    let signals = export.signals()
    let model = E4(
      bvp: try #require(signals["bvp"]), eda: try #require(signals["eda"]),
      temperature: try #require(signals["temperature"]), accelerationX: try #require(signals["acc.x"]),
      accelerationY: try #require(signals["acc.y"]), accelerationZ: try #require(signals["acc.z"]))
    let manager = try await rig.host(model)
    let bvp = E4Rig.collect(await manager.bvp())
    let gsr = E4Rig.collect(await manager.gsr())
    let temperature = E4Rig.collect(await manager.temperature())
    let acceleration = E4Rig.collect(await manager.acceleration())
    let tags = E4Rig.collect(await manager.tags())
    try await manager.connect()
    // The recorded tags, pressed at their times in the session.
    var elapsed = 0.0
    for offset in export.tagOffsets {
      await rig.clock.advance(by: .milliseconds(Int((offset - elapsed) * 1000)))
      await model.pressButton()
      elapsed = offset
    }
    await rig.clock.advance(by: .seconds(12) - .milliseconds(Int(elapsed * 1000)))
    #expect(await model.samplesTaken(.bvp) == 640, "the recording ended")
    await manager.disconnect()
    let t0 = try #require(await manager.sessionStart)

    // Sample-exact where the wire is exact (BVP in 1/16, acceleration in 1/64 g) …
    let b = await bvp.value
    #expect(b.map(\.value) == (0..<640).map(Self.bvp))
    let a = await acceleration.value
    #expect(a.count == 320)
    for axis in 0..<3 {
      let received = a.map { Int([$0.x, $0.y, $0.z][axis]) }
      #expect(received == (0..<320).map { Self.acceleration($0, axis: axis) }, "axis \(axis)")
    }
    // … and to the wire's resolution for EDA (24-bit resistance) and temperature (0.02 K).
    let g = await gsr.value
    #expect(g.count == 40)
    #expect(zip(g.map(\.value), (0..<40).map(Self.eda)).allSatisfy { abs($0 - $1) < $1 * $1 * 1e-6 })
    let t = await temperature.value
    #expect(t.count == 40)
    #expect(zip(t.map(\.value), (0..<40).map(Self.temperature)).allSatisfy { abs($0 - $1) < 1e-9 })
    // Timestamps at the recorded rates from the session's start.
    #expect(b.enumerated().allSatisfy { $1.timestamp == t0 + Double($0) / 64 })
    #expect(g.last?.timestamp == t0 + 39.0 / 4)
    #expect(a.last?.timestamp == t0 + 319.0 / 32)
    // The tags at their offsets.
    let tagTimes = await tags.value.map { $0.timestamp - t0 }
    #expect(tagTimes.count == 2)
    #expect(zip(tagTimes, [3.5, 7.25]).allSatisfy { abs($0 - $1) < 0.001 })
    await rig.air.removeAll()
  }
}
