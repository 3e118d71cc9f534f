import Foundation
import MethodScriptFormat
import Testing

@testable import EmStatPico

/// `smooth`, `linear_fit`, `peak_detect` and `battery_perc`, as PalmSens'
/// examples use them (MSExample013, 014, 024, 031): the arithmetic against
/// what it must give, and the commands in scripts.
@Suite struct MethodScriptArrayAnalysisTests {
  @Test func savitzkyGolayKeepsAQuadraticAndQuietsNoise() {
    let quadratic = (0..<40).map { (i: Int) -> Double in
      let x = Double(i)
      return 0.5 * x * x - 3 * x + 2
    }
    let kept = ArrayAnalysis.smooth(quadratic, window: 9)
    for i in quadratic.indices { #expect(abs(kept[i] - quadratic[i]) < 1e-9, "point \(i)") }
    // Alternating noise on a line: the 5-point window takes most of it away.
    let noisy = (0..<100).map { (i: Int) -> Double in Double(i) + (i % 2 == 0 ? 1 : -1) }
    let smoothed = ArrayAnalysis.smooth(noisy, window: 5)
    let residual = (10..<90).map { abs(smoothed[$0] - Double($0)) }.max() ?? 1
    #expect(residual < 0.5, "worst \(residual)")
    #expect(ArrayAnalysis.smooth(noisy, window: 1) == noisy)
  }

  @Test func linearFitFindsTheLine() throws {
    let x = (0..<20).map { Double($0) * 0.01 - 0.1 }
    let y = x.map { 2.5e-6 * $0 + 1e-7 }
    let fit = try #require(ArrayAnalysis.linearFit(x: x, y: y))
    #expect(abs(fit.slope - 2.5e-6) < 1e-15)
    #expect(abs(fit.intercept - 1e-7) < 1e-18)
    #expect(ArrayAnalysis.linearFit(x: [1, 1, 1], y: [1, 2, 3]) == nil)
    #expect(ArrayAnalysis.linearFit(x: [1], y: [1]) == nil)
  }

  @Test func peaksAreFoundHighestFirstWithTheirHeightAboveTheirBase() {
    // Two Gaussian peaks on a sloped baseline, and a ripple below the threshold.
    let values = (0..<200).map { (i: Int) -> Double in
      let x = Double(i)
      let first: Double = 5 * exp(-pow((x - 60) / 6, 2))
      let second: Double = 3 * exp(-pow((x - 140) / 6, 2))
      let ripple: Double = 0.05 * sin(x * 1.7)
      return 0.01 * x + first + second + ripple
    }
    let peaks = ArrayAnalysis.peaks(values, minimumHeight: 1)
    // The baseline's slope and the ripple move the second top by a point.
    #expect(peaks.count == 2 && peaks[0].index == 60 && abs(peaks[1].index - 140) <= 1, "\(peaks)")
    #expect(abs(peaks[0].height - 5) < 0.4 && abs(peaks[1].height - 3) < 0.4, "\(peaks)")
    let dips = ArrayAnalysis.peaks(values.map { -$0 }, minimumHeight: 1, maxima: false)
    #expect(dips.map(\.index) == peaks.map(\.index))
    #expect(ArrayAnalysis.peaks([1, 2, 3], minimumHeight: 0).isEmpty)
  }

  @Test func theCommandsRunInAScript() async throws {
    let lines = try await MethodScriptLanguageTests.run(
      """
      var i
      var x
      var y
      var slope
      var intercept
      var battery
      array xs 9i
      array ys 9i
      array smoothed 9i
      array peak_ix 2i
      array peak_h 2i
      store_var i 0i ja
      loop i < 9i
        copy_var i x
        int_to_float x
        store_var y 1 ja
        mul_var y x
        mul_var y x
        mul_var y -1
        add_var y 8
        mul_var y x
        copy_var x xs[i]
        copy_var y ys[i]
        add_var i 1i
      endloop
      smooth ys smoothed 0i
      smooth ys 9i smoothed 1i
      linear_fit xs xs slope intercept
      peak_detect ys 9i peak_ix peak_h 0i 1
      battery_perc battery
      pck_start
      pck_add slope
      pck_add intercept
      pck_add peak_ix[0i]
      pck_add peak_ix[1i]
      pck_add battery
      pck_end
      """)
    // y = x(8 − x²)… peaks where 8 − 3x² = 0: x ≈ 1.63, so at index 2 of 0…8.
    let package = try #require(EmStatPicoPhysicsTests.packages(lines).first).values.map(\.value)
    #expect(abs(package[0] - 1) < 1e-9 && abs(package[1]) < 1e-9, "\(package)")
    #expect(package[2] == 2 && package[3] == -1, "\(package)")
    #expect(package[4] == -1)
  }

  /// What the script answers: its output lines, or its parse error's line.
  static func answer(_ text: String) async -> [String] {
    do {
      return try await MethodScriptLanguageTests.run(text)
    } catch {
      return ["\(error)"]
    }
  }

  @Test func badArgumentsAreRefusedWhereTheyAre() async throws {
    // Refused before anything runs: a strength with no window, a direction that is neither 0 nor 1.
    #expect(await Self.answer("array a 4i\narray b 4i\nsmooth a b 9i") == ["!4007: Line 3, Col 12"])
    #expect(
      await Self.answer("array a 4i\narray b 4i\narray c 1i\npeak_detect a 4i b c 2i 0") == ["!4007: Line 4, Col 22"])
    // At run time: past the target's end, and a fit through one x only.
    #expect(await Self.answer("array a 4i\narray b 2i\nsmooth a 4i b 1i") == ["!4007: Line 3, Col 1"])
    #expect(await Self.answer("var s\nvar k\narray a 4i\nlinear_fit a a s k") == ["!4007: Line 4, Col 1"])
  }
}
