import MethodScriptFormat
import Testing

@testable import EmStatPico

/// The language of MethodSCRIPT run on the interpreter: control flow, arrays,
/// arithmetic and bit operations, conversions, `send_string`, `meas` and the
/// runtime errors.
@Suite struct MethodScriptLanguageTests {
  static func run(_ text: String, cell: ElectrochemicalCell = .dummy) async throws -> [String] {
    try await EmStatPicoPhysicsTests.run(text, cell: cell)
  }

  /// The values of the packages' first variables, in order.
  static func values(_ lines: [String]) throws -> [Double] {
    try EmStatPicoPhysicsTests.packages(lines).map { try #require($0.values.first).value }
  }

  @Test func loopRunsWhileItsConditionHoldsAndWritesLAndPlus() async throws {
    let lines = try await Self.run(
      """
      var i
      store_var i 0i ja
      loop i < 5i
        pck_start
        pck_add i
        pck_end
        add_var i 1i
      endloop
      """)
    #expect(lines == ["L", "Pja8000000i", "Pja8000001i", "Pja8000002i", "Pja8000003i", "Pja8000004i", "+", ""])
  }

  @Test func ifElseifElseTakesTheFirstBranchThatHolds() async throws {
    let lines = try await Self.run(
      """
      var i
      var r
      store_var i 0i ja
      loop i < 6i
        if i == 0i
          store_var r 100i ja
        elseif i <= 2i
          store_var r 200i ja
        elseif i != 5i
          store_var r 300i ja
        else
          store_var r 400i ja
        endif
        pck_start
        pck_add r
        pck_end
        add_var i 1i
      endloop
      """)
    #expect(try Self.values(lines) == [100, 200, 200, 300, 300, 400])
  }

  @Test func breakloopLeavesTheInnermostLoopOnly() async throws {
    let lines = try await Self.run(
      """
      var i
      var j
      store_var i 0i ja
      loop i < 3i
        store_var j 0i ja
        loop 1i == 1i
          if j >= 2i
            breakloop
          endif
          add_var j 1i
        endloop
        pck_start
        pck_add i
        pck_add j
        pck_end
        add_var i 1i
      endloop
      """)
    let packages = try EmStatPicoPhysicsTests.packages(lines)
    #expect(packages.map { $0.values.map(\.value) } == [[0, 2], [1, 2], [2, 2]])
    #expect(lines.filter { $0 == "L" }.count == 4)
    #expect(lines.filter { $0 == "+" }.count == 4)
  }

  @Test func breakloopEndsAMeasurementLoopWithItsStar() async throws {
    let lines = try await Self.run(
      """
      var n
      store_var n 0i ja
      set_e 0
      cell_on
      meas_loop_ca p c 100m 10m 1
        add_var n 1i
        if n > 3i
          breakloop
        endif
        pck_start
        pck_add c
        pck_end
      endloop
      pck_start
      pck_add n
      pck_end
      """)
    #expect(lines.first == "M0000")
    #expect(lines.filter { $0.hasPrefix("P") }.count == 4)
    #expect(lines.suffix(3) == ["*", "Pja8000004i", ""])
  }

  @Test func arraysStoreAndReadElementsByIndex() async throws {
    let lines = try await Self.run(
      """
      var i
      var v
      var m
      array a 4i
      store_var i 0i ja
      loop i < 4i
        copy_var i v
        mul_var v v
        array_set a i v
        add_var i 1i
      endloop
      store_var a[0i] 7i ja
      copy_var a[3i] v
      array_get a 2i m
      pck_start
      pck_add a[0i]
      pck_add a[1i]
      pck_add v
      pck_add m
      pck_end
      mean a m
      pck_start
      pck_add m
      pck_end
      """)
    let values = try EmStatPicoPhysicsTests.packages(lines).map { $0.values.map(\.value) }
    #expect(values == [[7, 1, 9, 4], [(7 + 1 + 4 + 9) / 4.0]])
  }

  @Test func copyVarCopiesItsFirstArgumentIntoItsSecond() async throws {
    let lines = try await Self.run(
      """
      var a
      var b
      store_var a 5i ja
      store_var b 2i ja
      copy_var a b
      pck_start
      pck_add a
      pck_add b
      pck_end
      """)
    #expect(lines.first == "Pja8000005i;ja8000005i")
  }

  @Test func anIndexPastTheArrayIsARuntimeErrorOnItsLine() async throws {
    let lines = try await Self.run(
      """
      array a 2i
      var i
      store_var i 2i ja
      store_var a[i] 1 ja
      """)
    #expect(lines == ["!4007: Line 4, Col 1"])
  }

  struct Operation: CustomTestStringConvertible, Sendable {
    var script: String
    var package: String
    var testDescription: String { script.replacingOccurrences(of: "\n", with: "; ") }
  }

  static let operations: [Operation] = [
    Operation(script: "store_var x 7i ja\nadd_var x 0x3FFi", package: "Pja8000406i"),
    Operation(script: "store_var x 7i ja\nsub_var x 10i", package: "Pja7FFFFFDi"),
    Operation(script: "store_var x 7i ja\ndiv_var x 2i", package: "Pja8000003i"),
    Operation(script: "store_var x -7i ja\ndiv_var x 2i", package: "Pja7FFFFFDi"),
    Operation(script: "store_var x 7 ja\ndiv_var x 2", package: "Pja83567E0u"),
    Operation(script: "store_var x 3i ja\npow_var x 4i", package: "Pja8000051i"),
    Operation(script: "store_var x 4 ja\npow_var x 500m", package: "Pja81E8480u"),
    Operation(script: "store_var x 0b1100i ja\nbit_and_var x 0b1010", package: "Pja8000008i"),
    Operation(script: "store_var x 0b1100i ja\nbit_or_var x 0b1010", package: "Pja800000Ei"),
    Operation(script: "store_var x 0b1100i ja\nbit_xor_var x 0b1010", package: "Pja8000006i"),
    Operation(script: "store_var x 1i ja\nbit_lsl_var x 4i", package: "Pja8000010i"),
    Operation(script: "store_var x 0x100i ja\nbit_lsr_var x 4i", package: "Pja8000010i"),
    Operation(script: "store_var x -1i ja\nbit_lsr_var x 28i", package: "Pja800000Fi"),
    Operation(script: "store_var x 0i ja\nbit_inv_var x", package: "Pja7FFFFFFi"),
    Operation(script: "store_var x 2700m ja\nfloat_to_int x", package: "Pja8000002i"),
    Operation(script: "store_var x -2700m ja\nfloat_to_int x", package: "Pja7FFFFFEi"),
    Operation(script: "store_var x 3i ja\nint_to_float x\ndiv_var x 2", package: "Pja816E360u"),
    Operation(script: "store_var x 1 ja\nlog_var x", package: "Pja8000000a"),
  ]

  @Test(arguments: operations)
  func arithmeticBitOperationsAndConversions(_ operation: Operation) async throws {
    let lines = try await Self.run("var x\n" + operation.script + "\npck_start\npck_add x\npck_end")
    #expect(lines == [operation.package, ""])
  }

  @Test(arguments: [
    "store_var x 1 ja\nbit_and_var x 1i", "store_var x 1i ja\ndiv_var x 0i", "store_var x 1i ja\nbit_lsl_var x 40i",
    "store_var x 0 ja\nlog_var x",
  ])
  func operationsWithoutAResultAreRuntimeErrors(_ script: String) async throws {
    let lines = try await Self.run("var x\n" + script)
    #expect(lines.count == 1)
    #expect(lines.first?.hasPrefix("!400") == true)
    #expect(lines.first?.hasSuffix(": Line 3, Col 1") == true)
  }

  @Test func sendStringWritesATextLineWithFormattedValues() async throws {
    let lines = try await Self.run(
      """
      var i
      var x
      store_var i 42i ja
      store_var x 1500m ja
      send_string "hello # not a comment"
      send_string f"i={i}, x={x}"
      """)
    #expect(lines == ["Thello # not a comment", "Ti=42, x=1.5", ""])
  }

  @Test func measTakesItsIntervalAndReadsCurrentPotentialAndTemperature() async throws {
    let lines = try await Self.run(
      """
      var t
      set_e 200m
      cell_on
      timer_start
      meas 100m i ba
      meas 50m e ab
      meas 100m temp ef
      timer_get t
      pck_start
      pck_add i
      pck_add e
      pck_add temp
      pck_add t
      pck_end
      """)
    let package = try #require(try EmStatPicoPhysicsTests.packages(lines).first)
    let values = package.values.map(\.value)
    #expect(abs(values[0] - 0.2 / 10_000) < 1e-9)
    #expect(abs(values[1] - 0.2) < 1e-6)
    #expect(values[2] == MethodScriptInterpreter.boardTemperature)
    #expect(abs(values[3] - 0.25) < 1e-9)
    #expect(package.values.map(\.type.code) == ["ba", "ab", "ef", "eb"])
  }

  @Test func waitAndTimersTakeVirtualTime() async throws {
    let lines = try await Self.run(
      """
      var t
      timer_start
      wait 1500m
      timer_get t
      pck_start
      pck_add t
      pck_end
      """)
    #expect(abs(try Self.values(lines)[0] - 1.5) < 1e-9)
  }

  @Test func aMeasurementLoopRunsInsideALoopAndAnIf() async throws {
    let lines = try await Self.run(
      """
      var k
      store_var k 0i ja
      set_e 0
      cell_on
      loop k < 2i
        if k == 1i
          meas_loop_lsv p c 0 100m 50m 1
            pck_start
            pck_add c
            pck_end
          endloop
        endif
        add_var k 1i
      endloop
      """)
    #expect(lines.first == "L")
    #expect(lines.filter { $0 == "M0000" }.count == 1)
    #expect(lines.filter { $0.hasPrefix("P") }.count == 3)
    #expect(lines.suffix(3) == ["*", "+", ""])
  }

  @Test func anEndlessLoopStopsAtAbort() async throws {
    let script = try MethodScriptParser().parse(text: "var i\nloop 1i == 1i\nadd_var i 1i\nendloop").get()
    let abort = AbortSignal()
    let lines = LinesBox()
    var interpreter = MethodScriptInterpreter(
      cell: .dummy, potentiostat: Potentiostat(noiseFraction: 0, impedanceNoise: 0, seed: 1), background: nil,
      abort: abort, output: { line in await lines.append(line) })
    let task = Task { await interpreter.run(script, clock: SteppingClock()) }
    try await Task.sleep(for: .milliseconds(50))
    abort.set()
    await task.value
    #expect(await lines.lines == ["L", "+", ""])
  }
}

actor LinesBox {
  var lines: [String] = []
  func append(_ line: String) { lines.append(line) }
}

/// `set_int` and `await_int`: a loop on a fixed period, whatever its body takes.
@Suite struct MethodScriptIntervalTests {
  @Test func awaitIntEndsEachPeriodOnTime() async throws {
    let lines = try await EmStatPicoPhysicsTests.run(
      """
      var i
      var t
      store_var i 0i ja
      timer_start
      set_int 500m
      loop i < 4i
        wait 120m
        timer_get t
        pck_start
        pck_add t
        pck_end
        add_var i 1i
        await_int
      endloop
      """, cell: .dummy)
    let times = try EmStatPicoPhysicsTests.packages(lines).map { try #require($0.time) }
    #expect(times.count == 4)
    for (n, t) in times.enumerated() { #expect(abs(t - (Double(n) * 0.5 + 0.12)) < 1e-9) }
  }

  @Test func awaitIntWithoutSetIntIsAnError() async throws {
    #expect(try await EmStatPicoPhysicsTests.run("await_int", cell: .dummy) == ["!4003: Line 1, Col 1"])
  }
}
