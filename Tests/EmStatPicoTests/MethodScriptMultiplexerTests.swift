import MethodScriptFormat
import Testing

@testable import EmStatPico

/// The multiplexer: `mux_set_channel` connects one of the cells behind it.
@Suite struct MethodScriptMultiplexerTests {
  static func run(_ text: String, cells: [ElectrochemicalCell]) async throws -> [String] {
    let script = try MethodScriptParser().parse(text: text).get()
    let lines = LinesBox()
    var interpreter = MethodScriptInterpreter(
      cell: .dummy, potentiostat: Potentiostat(noiseFraction: 0, impedanceNoise: 0, seed: 1), background: nil,
      abort: AbortSignal(), multiplexerCells: cells, output: { await lines.append($0) })
    await interpreter.run(script, clock: SteppingClock())
    return await lines.lines
  }

  static let everyChannel = """
    var n
    var i
    mux_config 4i 0x0000
    mux_get_channel_count n
    store_var i 1i ja
    set_e 200m
    cell_on
    loop i <= n
      mux_set_channel i
      meas_loop_ca p c 200m 10m 30m
        pck_start
        pck_add i
        pck_add c
        pck_end
      endloop
      add_var i 1i
    endloop
    on_finished:
      cell_off
    """

  @Test func eachChannelMeasuresItsOwnCell() async throws {
    let resistances = [1_000.0, 2_000, 5_000]
    let lines = try await Self.run(Self.everyChannel, cells: resistances.map { .resistor($0) })
    let packages = try EmStatPicoPhysicsTests.packages(lines)
    #expect(packages.count == 9)
    for package in packages {
      let channel = Int(package.values[0].value)
      #expect(abs((package.current ?? 0) - 0.2 / resistances[channel - 1]) < 1e-9)
    }
  }

  @Test func aChannelPastTheLastOrWithoutConfigurationIsOutOfRange() async throws {
    #expect(try await Self.run("mux_set_channel 1i", cells: [.dummy]) == ["!4007: Line 1, Col 1"])
    #expect(
      try await Self.run("mux_config 4i 0\nmux_set_channel 3i", cells: [.dummy, .dummy]) == ["!4007: Line 2, Col 1"])
    #expect(try await Self.run("mux_config 4i 0\nmux_set_channel 0i", cells: [.dummy]) == ["!4007: Line 2, Col 1"])
    #expect(try await Self.run("mux_config 4i 0", cells: []) == ["!4007: Line 1, Col 1"])
  }

  @Test func aPackageMayHoldALoopAsPalmSensMuxExampleDoes() throws {
    let script = """
      var i
      array currents 4i
      store_var i 0i ja
      pck_start
      loop i < 4i
        pck_add currents[i]
        add_var i 1i
      endloop
      pck_end
      """
    #expect((try? MethodScriptParser().parse(text: script).get()) != nil)
    guard case .failure(let error) = MethodScriptParser().parse(text: "var i\nloop i < 1i\npck_start\nendloop\npck_end")
    else {
      Issue.record("parsed")
      return
    }
    #expect(error.description == "!4006: Line 4, Col 1")
  }
}
