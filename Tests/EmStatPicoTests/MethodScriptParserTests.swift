import Testing

@testable import EmStatPico

/// The parser accepts PalmSens' example scripts in both dialects and answers
/// each malformed script with the error line the device writes.
@Suite struct MethodScriptParserTests {
  /// A malformed script (lines after `e`) and the device's error line.
  struct Case: CustomTestStringConvertible, Sendable {
    var script: String
    var errorLine: String
    var testDescription: String { errorLine }
  }

  static let lineOf129 = "set_e " + String(repeating: "1", count: 123)

  static let malformed: [Case] = [
    Case(script: "bogus 1", errorLine: "!4001: Line 1, Col 1"),
    Case(script: "var c\n  Set_e 1", errorLine: "!4001: Line 2, Col 3"),
    Case(script: "var", errorLine: "!4002: Line 1, Col 1"),
    Case(script: "var a b", errorLine: "!4002: Line 1, Col 7"),
    Case(script: "cell_on 1", errorLine: "!4002: Line 1, Col 9"),
    Case(script: "set_e x", errorLine: "!4004: Line 1, Col 7"),
    Case(script: "set_e 1.2.3", errorLine: "!4003: Line 1, Col 7"),
    Case(script: "set_e 500q", errorLine: "!4003: Line 1, Col 7"),
    Case(script: "store_var a 1 BA", errorLine: "!4003: Line 1, Col 15"),
    Case(script: "# comment\nvar a\nadd_var b 1", errorLine: "!4004: Line 3, Col 9"),
    Case(script: "endloop", errorLine: "!4005: Line 1, Col 1"),
    Case(script: "var p\nvar c\nmeas_loop_lsv p c -500m 500m 10m 100m\npck_start", errorLine: "!4005: Line 3, Col 1"),
    Case(
      script: "meas_loop_ca p c 0 10m 1\nmeas_loop_ca q d 0 10m 1\nendloop\nendloop",
      errorLine: "!4005: Line 2, Col 1"),
    Case(script: "var a\npck_add a", errorLine: "!4006: Line 2, Col 1"),
    Case(script: "pck_end", errorLine: "!4006: Line 1, Col 1"),
    Case(script: "var a\npck_start\npck_add a", errorLine: "!4006: Line 2, Col 1"),
    Case(script: "pck_start\npck_start", errorLine: "!4006: Line 2, Col 1"),
    Case(script: "meas_loop_lsv p c -500m 500m 0 100m\nendloop", errorLine: "!4007: Line 1, Col 30"),
    Case(script: "meas_loop_lsv p c -500m 500m 10m -1\nendloop", errorLine: "!4007: Line 1, Col 34"),
    Case(script: "set_range ba 0", errorLine: "!4007: Line 1, Col 14"),
    Case(script: "set_autoranging ba 50n -20m", errorLine: "!4007: Line 1, Col 24"),
    Case(script: "var i\nloop i < 3i\nadd_var i 1i", errorLine: "!4005: Line 2, Col 1"),
    Case(script: "var i\nif i < 3i\nendloop", errorLine: "!4005: Line 3, Col 1"),
    Case(script: "var i\nloop i < 3i\nendif", errorLine: "!4005: Line 3, Col 1"),
    Case(script: "var i\nif i < 3i\nelse\nelseif i > 1\nendif", errorLine: "!4005: Line 4, Col 1"),
    Case(script: "else", errorLine: "!4005: Line 1, Col 1"),
    Case(script: "breakloop", errorLine: "!4005: Line 1, Col 1"),
    Case(script: "var i\nif i < 3i\nbreakloop\nendif", errorLine: "!4005: Line 3, Col 1"),
    Case(script: "var i\nloop i =< 3i\nendloop", errorLine: "!4003: Line 2, Col 8"),
    Case(script: "var i\nloop i <\nendloop", errorLine: "!4002: Line 2, Col 1"),
    Case(script: "var i\nif i < 3i 4\nendif", errorLine: "!4002: Line 2, Col 11"),
    Case(script: "var i\nadd_var i[0i] 1", errorLine: "!4003: Line 2, Col 9"),
    Case(script: "array a 4i\nadd_var a 1", errorLine: "!4003: Line 2, Col 9"),
    Case(script: "array a 4i\nadd_var a[j] 1", errorLine: "!4004: Line 2, Col 9"),
    Case(script: "array a 4i\nadd_var a[-1i] 1", errorLine: "!4007: Line 2, Col 9"),
    Case(script: "array a 0i", errorLine: "!4007: Line 1, Col 9"),
    Case(script: "array a 100000i", errorLine: "!4007: Line 1, Col 9"),
    Case(script: "var a\nbit_and_var a 0x1G", errorLine: "!4003: Line 2, Col 15"),
    Case(script: "var a\nbit_and_var a 0b102", errorLine: "!4003: Line 2, Col 15"),
    Case(script: "send_string \"open", errorLine: "!4003: Line 1, Col 13"),
    Case(script: "send_string f\"{x}\"", errorLine: "!4004: Line 1, Col 13"),
    Case(script: "send_string text", errorLine: "!4003: Line 1, Col 13"),
    Case(script: "meas 100m t zz", errorLine: "!4003: Line 1, Col 13"),
    Case(script: "meas -1 t ba", errorLine: "!4007: Line 1, Col 6"),
    Case(script: "meas_loop_dpv e i 0 1 10m 20m 5m\nendloop", errorLine: "!4002: Line 1, Col 1"),
    Case(
      script: "meas_loop_ocp e 100m 1\nmeas_loop_cp e i 1u 100m 1\nendloop\nendloop",
      errorLine: "!4005: Line 2, Col 1"),
    Case(script: "set_pgstat_mode 7", errorLine: "!4007: Line 1, Col 17"),
    Case(script: "meas_loop_cv p c 0 1 -1 10m 1 nscans(0)\nendloop", errorLine: "!4007: Line 1, Col 31"),
    Case(script: "meas_loop_cv p c 0 1 -1 10m 1 scans(2)\nendloop", errorLine: "!4003: Line 1, Col 31"),
    Case(script: "meas x ca", errorLine: "!4003: Line 1, Col 8"),
    Case(script: "var a\non_finished:\non_finished:", errorLine: "!4003: Line 3, Col 1"),
    Case(script: "var a\n" + lineOf129, errorLine: "!0008: Line 2, Col 129"),
  ]

  @Test(arguments: malformed)
  func malformedScriptsFailWithTheDevicesErrorLine(_ test: Case) {
    switch MethodScriptParser().parse(text: test.script) {
    case .success(let script): Issue.record("parsed: \(script)")
    case .failure(let error): #expect(error.description == test.errorLine)
    }
  }

  @Test func aScriptLongerThanTheDeviceHoldsFails() {
    let lines = Array(repeating: "cell_off", count: MethodScriptParser().maximumLines + 1)
    guard case .failure(let error) = MethodScriptParser().parse(lines) else {
      Issue.record("parsed")
      return
    }
    #expect(error.code == .scriptTooLong)
  }

  /// PalmSens' iOS example script (the older dialect).
  static let iOSExample = """
    e
    var c
    var p
    set_pgstat_mode 3
    set_cr 500u
    set_autoranging 59n 590u
    set_e -500m
    cell_on
    wait 1
    meas_loop_lsv p c -500m 500m 50m 100m
    \tpck_start
    \tpck_add p
    \tpck_add c
    \tpck_end
    endloop
    on_finished:
    cell_off

    """

  @Test func parsesPalmSensExampleScripts() throws {
    let script = try MethodScriptParser().parse(text: Self.iOSExample).get()
    #expect(script.statements.count == 9)
    #expect(script.onFinished == [MethodScript.Statement(.cellOff, line: 16)])
    guard case .linearSweep(let sweep, let body) = script.statements.last?.command else {
      Issue.record("no LSV")
      return
    }
    #expect(sweep.begin == .literal(-0.5))
    #expect(sweep.step == .literal(0.05))
    #expect(body.count == 4)
    let modern = """
      var c
      var p
      var f
      var r
      var j
      store_var p -500m ja
      set_pgstat_chan 0
      set_pgstat_mode 2
      set_max_bandwidth 1M
      set_range_minmax da -1 1
      set_range ba 30u
      set_autoranging ba 50n 2m
      set_range ab 4
      set_autoranging ab 4 4
      set_e p
      cell_on
      timer_start
      meas_loop_cv p c 0 500m -500m 10m 1 nscans(3)
        pck_start
        pck_add p
        pck_add c
        pck_end
      endloop
      meas_loop_ca p c 200m 5m 5
        timer_get t
        pck_start
        pck_add t
        pck_add c
        pck_end
      endloop
      meas_loop_eis f r j 10m 100k 1 11i 0
        pck_start
        pck_add f
        pck_add r
        pck_add j
        pck_end
      endloop
      on_finished:
        cell_off
      """
    let parsed = MethodScriptParser().parse(text: modern)
    #expect((try? parsed.get()) != nil, "\(parsed)")
  }

  @Test func literalsTakeIntegerHexAndBinaryForms() {
    #expect(MethodScriptParser.literal("0x3FFi") == .integer(0x3FF))
    #expect(MethodScriptParser.literal("0x1E") == .integer(30))
    #expect(MethodScriptParser.literal("0b101") == .integer(5))
    #expect(MethodScriptParser.literal("0b11111110") == .integer(254))
    #expect(MethodScriptParser.literal("-7i") == .integer(-7))
    #expect(MethodScriptParser.literal("2100m") == .literal(2.1))
    #expect(MethodScriptParser.literal("1.5i") == nil)
    #expect(MethodScriptParser.literal("0b") == nil)
  }

  @Test func namesMayBeLongerThanSixteenCharacters() throws {
    let script = try MethodScriptParser().parse(
      text: "var frequency_start_in_hertz\nstore_var frequency_start_in_hertz 100k ja"
    )
    .get()
    #expect(script.statements.count == 2)
  }

  @Test func measTakesItsDocumentedIntervalForm() throws {
    let script = try MethodScriptParser().parse(text: "meas 100m temp ef").get()
    #expect(script.statements.first?.command == .measure(.variable("temp"), "ef", interval: .literal(0.1)))
  }

  @Test func controlFlowNestsAndKeepsItsLines() throws {
    let script = try MethodScriptParser().parse(
      text: """
        var i
        store_var i 0i ja
        loop i < 10i
          if i == 3i
            breakloop
          elseif i >= 1i
            add_var i 2i
          else
            add_var i 1i
          endif
        endloop
        """
    ).get()
    guard case .loop(let condition, let body) = script.statements.last?.command else {
      Issue.record("no loop: \(script)")
      return
    }
    #expect(condition == MethodScript.Condition(lhs: .variable("i"), comparison: .less, rhs: .integer(10)))
    guard case .conditional(let branches) = body.first?.command else {
      Issue.record("no if: \(body)")
      return
    }
    #expect(branches.count == 3)
    #expect(branches[0].body == [MethodScript.Statement(.breakLoop, line: 5)])
    #expect(branches[2].condition == nil)
    #expect(script.statements.last?.line == 3)
  }

  @Test func literalsTakeSIPrefixes() {
    #expect(MethodScriptParser.number("-500m") == -0.5)
    #expect(abs((MethodScriptParser.number("590u") ?? 0) - 590e-6) < 1e-18)
    #expect(MethodScriptParser.number("11i") == 11)
    #expect(MethodScriptParser.number("1M") == 1e6)
    #expect(MethodScriptParser.number("0x1F") == 31)
    #expect(MethodScriptParser.number("m") == nil)
    #expect(MethodScriptParser.number("1 ") == nil)
  }
}
