import Foundation
import Signals
import Synchronization
import Testing

@testable import ArctopSDK
@testable import Muse

/// The parts of a Muse run made cheaper per sample: the synthetic EEG's
/// turned sines, the client's spectrum, and its decoding of notifications
/// as they arrive.
struct MuseAnalysisTests {
  @Test func aPhasorTurnedASecondOfSamplesStaysOnTheSine() {
    let step = 2 * Double.pi * 10.3 / 256
    var turned = Phasor(angle: 0.7)
    for k in 1...256 {
      turned.turn(by: Phasor(angle: step))
      let exact = Phasor(angle: 0.7 + Double(k) * step)
      #expect(abs(turned.sin - exact.sin) < 1e-12 && abs(turned.cos - exact.cos) < 1e-12, "after \(k) turns")
    }
  }

  /// A sine of amplitude A in one band's bin gives about A²/2 there and next
  /// to nothing in the others; asymmetry is ln(AF8's alpha / AF7's).
  @Test func bandPowersFindASineInItsBand() {
    func sine(_ hertz: Double, _ amplitude: Double) -> [Double] {
      (0..<256).map { amplitude * sin(2 * .pi * hertz * Double($0) / 256) + 7 }
    }
    let alpha = BandPowers.of([sine(10, 20), sine(10, 20), sine(10, 40), sine(10, 20)])
    // The Hann window spreads a bin's power over it and its two neighbours (1/4 of it each side).
    #expect(abs(alpha.alpha - (200 + 200 + 800 + 200) / 4 * 1.5) < 1e-6)
    #expect(alpha.delta < 1e-9 && alpha.theta < 1e-9 && alpha.beta < 1e-9 && alpha.gamma < 1e-9)
    #expect(abs(alpha.frontalAsymmetry - log(4)) < 1e-9)
    let beta = BandPowers.of([sine(20, 10)])
    #expect(abs(beta.beta - 50 * 1.5) < 1e-6 && beta.alpha < 1e-9)
  }

  /// Windows transformed two at a time give each one's band powers as a
  /// direct transform of it alone does: one to five windows of unlike
  /// signals (the odd one out paired with nothing), a short one among them
  /// counting for no power.
  @Test func bandPowersOfWindowsInPairsMatchADirectTransform() {
    var random = SplitMix64(seed: 7)
    func window(_ hertz: Double, _ amplitude: Double) -> [Double] {
      (0..<256).map {
        amplitude * sin(2 * .pi * hertz * Double($0) / 256 + hertz) + Double.random(in: -10...10, using: &random) + 3
      }
    }
    /// Power per whole hertz of a Hann-windowed window, its mean removed, summed over `band`.
    func direct(_ samples: [Double], _ band: ClosedRange<Int>) -> Double {
      guard samples.count == 256 else { return 0 }
      let mean = samples.reduce(0, +) / 256
      return band.reduce(0) { sum, f in
        var (re, im) = (0.0, 0.0)
        for n in 0..<256 {
          let x = (samples[n] - mean) * (0.5 - 0.5 * cos(2 * .pi * Double(n) / 256))
          re += x * cos(2 * .pi * Double(f * n) / 256)
          im -= x * sin(2 * .pi * Double(f * n) / 256)
        }
        let amplitude = 4 * (re * re + im * im).squareRoot() / 256
        return sum + amplitude * amplitude / 2
      }
    }
    let all = [window(2, 30), window(10, 15), [1, 2, 3], window(25, 8), window(40, 5)]
    // The short one first in its pair, then second, then both short.
    var cases = (1...5).map { Array(all.prefix($0)) }
    cases += [[all[0], all[2], all[1], all[3]], [[1, 2], [3]]]
    for windows in cases {
      let powers = BandPowers.of(windows)
      let got = [powers.delta, powers.theta, powers.alpha, powers.beta, powers.gamma]
      for (band, value) in zip(BandPowers.bands, got) {
        let expected = windows.reduce(0) { $0 + direct($1, band) } / Double(windows.count)
        #expect(
          abs(value - expected) <= 1e-9 * max(1, expected), "\(windows.map(\.count)) samples, \(band) Hz")
      }
    }
    // Each window's own spectrum, not the pair's mixed: the asymmetry of AF7
    // (the second of the first pair) and AF8 (the first of the second).
    let four = [window(10, 10), window(10, 20), window(10, 45), window(9, 5)]
    let expected = log(direct(four[2], BandPowers.bands[2]) / direct(four[1], BandPowers.bands[2]))
    #expect(abs(BandPowers.of(four).frontalAsymmetry - expected) < 1e-9)
  }

  @Test func aFeedCutsWindowsOfASecondInOrderAndCountsWhatItCannotRead() async {
    let feed = MuseFeed(listeners: [])
    // 22 packets of 12 samples per sensor: one window of 256, 8 left over.
    for packet in 0..<44 {
      for sensor in 0..<4 {
        let codes = [UInt16](repeating: UInt16(2048 + packet), count: 12)
        feed.take(MusePacket.eeg(index: UInt16(packet), codes: codes), from: .eeg(sensor: sensor))
      }
    }
    feed.take(
      MusePacket.imu(index: 0, samples: [(0, 0, 16384), (0, 0, 16384), (0, 0, 16384)]), from: .acceleration)
    feed.take([1, 2, 3], from: .eeg(sensor: 2))
    feed.take([], from: .telemetry)
    feed.finish()
    var windows: [MuseFeed.Window] = []
    for await window in feed.windows { windows.append(window) }
    #expect(windows.count == 2)
    #expect(windows.allSatisfy { $0.eeg.count == 4 && $0.eeg.allSatisfy { $0.count == 256 } })
    // The first window ends with packet 21's first four samples, the second starts with its last eight.
    #expect(windows.first?.eeg[0].last == MuseWire.microvolts(2048 + 21))
    #expect(windows.last?.eeg[3].first == MuseWire.microvolts(2048 + 21))
    // The acceleration came after both windows were cut: neither has it.
    #expect(windows.allSatisfy { $0.motion.isEmpty })
    #expect(feed.malformed == 2)
  }

  /// The feed decodes each sensor's packets into one array: a listener that
  /// keeps the arrays keeps each packet's own samples, and a packet that
  /// cannot be read in the middle of a window changes neither the window nor
  /// what the listeners were given.
  @Test func aListenerKeepsEachPacketsSamplesAndAMalformedOneChangesNothing() async {
    let kept = KeptSamples()
    let feed = MuseFeed(listeners: [kept])
    func codes(_ packet: Int) -> [UInt16] { (0..<12).map { UInt16(2048 + packet * 12 + $0) } }
    for packet in 0..<22 {
      for sensor in 0..<4 {
        feed.take(MusePacket.eeg(index: UInt16(packet), codes: codes(packet)), from: .eeg(sensor: sensor))
        if packet == 10, sensor == 1 { feed.take([7, 7, 7], from: .eeg(sensor: 1)) }
      }
    }
    feed.finish()
    var windows: [MuseFeed.Window] = []
    for await window in feed.windows { windows.append(window) }
    let expected = (0..<22).flatMap { codes($0).map(MuseWire.microvolts) }
    #expect(kept.samples(of: 1) == (0..<22).map { Array(expected[($0 * 12)..<($0 * 12 + 12)]) })
    #expect(windows.count == 1)
    #expect(windows.first?.eeg[1] == Array(expected.prefix(256)))
    #expect(feed.malformed == 1)
  }
}

/// A raw-data listener that keeps every EEG array it is given.
private final class KeptSamples: ArctopRawDataListener {
  private let kept = Mutex<[Int: [[Double]]]>([:])
  func samples(of sensor: Int) -> [[Double]] { kept.withLock { $0[sensor] ?? [] } }
  func onEEG(sensor: Int, packetIndex: UInt16, microvolts: [Double]) {
    kept.withLock { $0[sensor, default: []].append(microvolts) }
  }
  func onBandPowers(_ powers: BandPowers) {}
  func onBattery(percent: Double) {}
}
