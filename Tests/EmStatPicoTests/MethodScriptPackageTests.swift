import MethodScriptFormat
import Testing

/// The package encoding: round trips for every variable type and SI prefix at
/// the ends of the 7-hex-digit range, and PalmSens' published sample packages.
@Suite struct MethodScriptPackageTests {
  /// Every prefix at zero, ±1, and both ends of the range, for every known type.
  @Test(arguments: SIPrefix.allCases)
  func everyPrefixRoundTripsAtTheRangeEnds(prefix: SIPrefix) throws {
    let raws = [
      MethodScriptValue.rawRange.lowerBound, MethodScriptValue.rawRange.lowerBound + 1, -1, 0, 1,
      MethodScriptValue.rawRange.upperBound - 1, MethodScriptValue.rawRange.upperBound,
    ]
    for type in MethodScriptVariableType.all {
      for raw in raws {
        let value = MethodScriptValue(type: type, raw: raw, prefix: prefix)
        #expect(value.text.utf8.count == 10)
        let decoded = try MethodScriptValue(text: Substring(value.text))
        #expect(decoded == value, "\(value.text)")
        #expect(decoded.raw == raw)
        #expect(decoded.prefix == prefix)
        #expect(decoded.value == Double(raw) * prefix.factor)
      }
    }
  }

  @Test func theRangeEndsAreWrittenAsThePublishedOffsets() {
    let lowest = MethodScriptValue(type: .weCurrent, raw: MethodScriptValue.rawRange.lowerBound, prefix: .pico)
    let highest = MethodScriptValue(type: .weCurrent, raw: MethodScriptValue.rawRange.upperBound, prefix: .pico)
    let zero = MethodScriptValue(type: .weCurrent, raw: 0, prefix: .none)
    #expect(lowest.text == "ba0000000p")
    #expect(highest.text == "baFFFFFFFp")
    #expect(zero.text == "ba8000000 ")
  }

  @Test func aRawBeyondTheRangeIsNaN() {
    let value = MethodScriptValue(type: .weCurrent, raw: MethodScriptValue.rawRange.upperBound + 1, prefix: .pico)
    #expect(value.raw == nil)
    #expect(value.text == "ba     nan")
    #expect(value.value.isNaN)
  }

  /// Real values pick the smallest prefix whose integer fits, so each decodes
  /// to within half a unit of that prefix (relative error below 1/2^26 at the
  /// top of every prefix's range).
  @Test func realValuesEncodeWithinHalfAUnitOfTheirPrefix() throws {
    var values: [Double] = [0, 1e-18, -1e-18, 123.456e-15, 7.5e-12, -0.4999, 0.5, 1e-3, 42, 9.99e20, -1.2e25]
    for prefix in SIPrefix.scaled {
      // The largest magnitude of each prefix, and just beyond it.
      values.append(Double(MethodScriptValue.rawRange.upperBound) * prefix.factor)
      values.append(Double(MethodScriptValue.rawRange.lowerBound) * prefix.factor)
      values.append(Double(MethodScriptValue.rawRange.upperBound + 1) * prefix.factor * 1.001)
    }
    for type in [MethodScriptVariableType.appliedPotential, .weCurrent, .zReal, .zImaginary, .appliedFrequency] {
      for value in values {
        let encoded = MethodScriptValue(type: type, value: value)
        let decoded = try MethodScriptValue(text: Substring(encoded.text))
        #expect(decoded == encoded)
        guard encoded.raw != nil else {
          // Only beyond the exa prefix's range.
          #expect(abs(value) > Double(MethodScriptValue.rawRange.upperBound) * 1e18)
          continue
        }
        #expect(abs(decoded.value - value) <= decoded.prefix.factor / 2 * (1 + 1e-9), "\(value) → \(encoded.text)")
        if value != 0 {
          // The integer is as large as the range allows: the next smaller prefix would overflow.
          if let index = SIPrefix.scaled.firstIndex(of: decoded.prefix), index > 0 {
            let smaller = SIPrefix.scaled[index - 1]
            #expect(abs(value / smaller.factor).rounded() > Double(MethodScriptValue.rawRange.upperBound))
          }
        }
      }
    }
  }

  @Test func valuesBeyondTheExaPrefixAndNonFiniteValuesAreNaN() throws {
    for value in [Double.nan, .infinity, -.infinity, 1e30, -1e30] {
      let encoded = MethodScriptValue(type: .weCurrent, value: value)
      #expect(encoded.text == "ba     nan")
      #expect(try MethodScriptValue(text: "ba     nan").value.isNaN)
    }
  }

  @Test func integersUseThePrefixI() throws {
    let count = MethodScriptValue(type: MethodScriptVariableType(code: "ee")!, integer: 42)
    #expect(count.text == "ee800002Ai")
    #expect(try MethodScriptValue(text: "ee800002Ai").value == 42)
  }

  @Test func metadataRoundTrip() throws {
    for status in 0...15 {
      for range in [0, 11, 128, 137, 255] {
        let value = MethodScriptValue(
          type: .weCurrent, value: -1.5e-6, status: MeasurementStatus(rawValue: UInt8(status)),
          currentRange: CurrentRange(index: UInt8(range)), noise: status * 3)
        let decoded = try MethodScriptValue(text: Substring(value.text))
        #expect(decoded == value)
        #expect(decoded.status?.rawValue == UInt8(status))
        #expect(decoded.currentRange?.index == UInt8(range))
        #expect(decoded.noise == status * 3)
      }
    }
  }

  /// PalmSens' LSV sample on the 10 kΩ dummy cell (the iOS example document):
  /// potentials about −0.5 V and +0.5 V, currents tens of µA, status OK,
  /// range 1 mA high speed (0x88).
  @Test(arguments: [
    ("Pda7F85F3Fu;ba48D503Dp,10,288", -499_905e-6, -57_847_747e-12),
    ("Pda7F9234Bu;ba4E2C324p,10,288", -449_717e-6, -52_247_772e-12),
    ("Pda806EC24u;baAE16C6Dp,10,288", 453_668e-6, 48_327_789e-12),
    ("Pda807B031u;baB360495p,10,288", 503_857e-6, 53_871_765e-12),
    ("Pda7F85F3Fu;ba4BA99F0p,10,288", -499_905e-6, -54_879_760e-12),
  ])
  func palmSensSamplePackagesDecode(line: String, potential: Double, current: Double) throws {
    let package = try MethodScriptPackage(line: line + "\n")
    #expect(package.values.count == 2)
    #expect(abs(try #require(package.potential) - potential) <= abs(potential) * 1e-15)
    #expect(abs(try #require(package.current) - current) <= abs(current) * 1e-15)
    #expect(package.values[0].prefix == .micro)
    #expect(package.values[1].prefix == .pico)
    #expect(package.values[0].status == nil)
    #expect(package.status == .ok)
    let range = try #require(package.currentRange)
    #expect(range.index == 0x88)
    #expect(range.isHighSpeed)
    #expect(range.fullScale == 1e-3)
    #expect(range.description == "1 mA (high speed)")
    // Encoding the decoded package gives the line back.
    #expect(package.line == line)
  }

  @Test func theSampleCurrentsAreThoseOfTenKiloohmsWithinTheDummyCellsTolerance() throws {
    // E/R for 10 kΩ, within the ~15% offset PalmSens' recorded sample shows.
    let package = try MethodScriptPackage(line: "Pda7F85F3Fu;ba48D503Dp,10,288")
    let expected = try #require(package.potential) / 10_000
    #expect(abs(try #require(package.current) - expected) < 0.2 * abs(expected))
  }

  @Test func impedancePackagesDecode() throws {
    let line = MethodScriptPackage([
      MethodScriptValue(type: .appliedFrequency, value: 1e5),
      MethodScriptValue(type: .zReal, value: 1234.5, status: .ok, currentRange: CurrentRange(index: 0x89)),
      MethodScriptValue(type: .zImaginary, value: -987.25, status: .overloadWarning),
    ]).line
    let package = try MethodScriptPackage(line: line)
    #expect(package.frequency == 1e5)
    #expect(abs(try #require(package.zReal) - 1234.5) < 1e-6)
    #expect(abs(try #require(package.zImaginary) + 987.25) < 1e-6)
    #expect(package.values[2].status == .overloadWarning)
  }

  @Test(arguments: [
    "", "P", "X", "Pda7F85F3Fu;", "Pda7F85F3F", "Pda7F85F3Fx", "PDA7F85F3Fu", "Pda7G85F3Fu", "Pda7F85F3Fu,",
    "Pda7F85F3Fu,1Z", "Pda7F85F3Fu;;ba48D503Dp",
  ])
  func malformedPackagesThrow(line: String) {
    #expect(throws: MethodScriptFormatError.self) { try MethodScriptPackage(line: line) }
  }

  @Test func unknownMetadataIsKeptAsWritten() throws {
    let value = try MethodScriptValue(text: "ba48D503Dp,10,288,3AB,412")
    #expect(value.otherMetadata == ["3AB"])
    #expect(value.noise == 0x12)
    #expect(value.text == "ba48D503Dp,10,288,412,3AB")
  }

  @Test func currentRangesCoverTheirFullScale() {
    #expect(CurrentRange.smallest(covering: 590e-6, highSpeed: false).fullScale == 1e-3)
    #expect(CurrentRange.smallest(covering: 1e-3, highSpeed: true).index == 0x88)
    #expect(CurrentRange.smallest(covering: 1, highSpeed: true).index == 0x89)
    #expect(CurrentRange.smallest(covering: 0, highSpeed: false).index == 0)
    #expect(!CurrentRange(index: 12).isKnown)
    #expect(!CurrentRange(index: 0x8A).isKnown)
  }

  @Test func everyTypePalmSensListsIsKnownWithItsUnit() {
    #expect(MethodScriptVariableType.all.count == 68)
    let bipotential = ["cl", "cm", "cn", "co", "cp", "cq", "cr", "cs", "ct", "cu", "cv", "cw", "cx", "cy", "cz"]
    let units = ["Ω", "Ω", "Ω", "Ω", "Ω", "Ω", "A", "V", "V", "Arms", "A", "Vrms", "V", "Vrms", "V"]
    for (code, unit) in zip(bipotential, units) {
      let type = MethodScriptVariableType(code: code)
      #expect(type?.isKnown == true, "\(code)")
      #expect(type?.unit == unit, "\(code)")
    }
    #expect(MethodScriptVariableType(code: "cl")?.name == "Z real bipot")
    #expect(MethodScriptVariableType(code: "zz")?.isKnown == false)
  }

  @Test func zImaginarysRangeIsAPotentialRangeAndZRealsACurrentRange() throws {
    let package = try MethodScriptPackage(line: "Pdc8030D40 ;cc8012345m,10,288;cd7FEDCBAm,10,203")
    #expect(package.values[1].currentRange == CurrentRange(index: 0x88))
    #expect(package.values[1].potentialRangeIndex == nil)
    #expect(package.values[2].currentRange == nil)
    #expect(package.values[2].potentialRangeIndex == 3)
    #expect(package.values[2].rangeIndex == 3)
    #expect(package.currentRange == CurrentRange(index: 0x88))
    // Potentials carry potential ranges, currents current ranges.
    #expect(try MethodScriptValue(text: "ab8000000 ,205").potentialRangeIndex == 5)
    #expect(try MethodScriptValue(text: "cj8000001u,207").currentRange == CurrentRange(index: 7))
    #expect(package.line == "Pdc8030D40 ;cc8012345m,10,288;cd7FEDCBAm,10,203")
  }

  /// A variable's text, written as bytes, is what the string-built text was
  /// (`String(_:radix:uppercase:)` padded with zeros), metadata and all,
  /// a raw set out of the range included.
  @Test func textsAreWrittenAsTheStringsWere() {
    func hex(_ value: Int, _ digits: Int) -> String {
      let text = String(value, radix: 16, uppercase: true)
      return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
    for raw in [-0x800_0000, -0x123_4567, -1, 0, 1, 0xABC, 0x7FF_FFFF] {
      for (status, range, noise) in [(nil, nil, nil), (0x3, 0x0A, 0x1F), (0x0, 0xFF, 0)] as [(UInt8?, UInt8?, Int?)] {
        var value = MethodScriptValue(type: .weCurrent, raw: raw, prefix: .micro, noise: noise, otherMetadata: ["7x"])
        value.status = status.map { MeasurementStatus(rawValue: $0) }
        value.rangeIndex = range
        var expected = "ba" + hex(raw + MethodScriptValue.offset, 7) + "u"
        if let status { expected += ",1" + hex(Int(status), 1) }
        if let range { expected += ",2" + hex(Int(range), 2) }
        if let noise { expected += ",4" + hex(noise, 1) }
        expected += ",7x"
        #expect(value.text == expected)
        #expect(MethodScriptPackage([value, value]).line == "P" + expected + ";" + expected)
      }
    }
    var outside = MethodScriptValue(type: .weCurrent, raw: 0, prefix: .pico)
    outside.raw = -0x900_0000
    #expect(outside.text == "ba" + hex(-0x100_0000, 7) + "p")
  }

  /// A line of printable ASCII is read from its bytes; with its `\n` it is
  /// read character by character: the same values, or the same complaint.
  @Test(arguments: [
    "Pda7F85F3Fu;ba48D4C77p,10,288", "Pda7F85F3Fu", "P", "", "X", "P;", "Pda7F85F3Fu;", "Pda7F85F3F",
    "Pda7F85F3Fu;ba48D4C77p,1", "Pda7F85F3Fu;ba48D4C77p,1G", "Pdz     nan;eb8000010i,43", "PDA7F85F3Fu",
    "Pda7F85F3Fk", "Pda7F85F3Fu,,", "Pda7F85F3Fu;ba48D4C77p,10,288,9abc",
  ])
  func printableLinesReadAsTheCharacterWiseReadingDoes(line: String) {
    func read(_ text: String) -> Result<MethodScriptPackage, MethodScriptFormatError> {
      Result { () throws(MethodScriptFormatError) in try MethodScriptPackage(line: text) }
    }
    switch (read(line), read(line + "\n")) {
    case (.success(let bytewise), .success(let characterwise)): #expect(bytewise == characterwise)
    case (.failure(let bytewise), .failure(let characterwise)): #expect(bytewise.reason == characterwise.reason)
    default: Issue.record("'\(line)' read differently")
    }
  }
}
