import Testing

@testable import EmStatPico

/// GPIO: the script's outputs reach the pins, and the pins' inputs reach the script.
@Suite struct MethodScriptGPIOTests {
  static func run(_ text: String, pins: GPIOPins) async throws -> (lines: [String], outputs: [UInt32]) {
    let script = try MethodScriptParser().parse(text: text).get()
    let lines = LinesBox()
    let outputs = LinesBox()
    var peripherals = PicoPeripherals()
    peripherals.pins = pins
    peripherals.event = { name, detail in
      if name == "gpio" { await outputs.append(String(detail.dropFirst("outputs 0b".count))) }
    }
    var interpreter = MethodScriptInterpreter(
      cell: .dummy, potentiostat: Potentiostat(noiseFraction: 0, impedanceNoise: 0, seed: 1), background: nil,
      abort: AbortSignal(), peripherals: peripherals, output: { await lines.append($0) })
    await interpreter.run(script, clock: SteppingClock())
    return (await lines.lines, await outputs.lines.compactMap { UInt32($0, radix: 2) })
  }

  @Test func outputsFollowSetGPIOAndSetGPIOMask() async throws {
    let pins = GPIOPins()
    let (lines, outputs) = try await Self.run(
      """
      var i
      set_gpio_cfg 0b111 1
      store_var i 0i aa
      loop i < 3i
        add_var i 1i
        set_gpio i
      endloop
      set_gpio_msk 0b100 1i
      set_gpio_msk 0b001 0i
      set_gpio 0x3FFi
      """, pins: pins)
    #expect(lines == ["L", "+", ""])
    // Only the three output pins change; set_gpio 0x3FF sets those three.
    #expect(outputs == [1, 2, 3, 7, 6, 7])
    #expect(pins.outputs == 0b111)
  }

  @Test func inputsReadTheirPullUpOrWhatDrivesThem() async throws {
    let pins = GPIOPins()
    pins.drive(3, high: true)
    let script = """
      var g
      set_gpio_cfg 0b1 0
      set_gpio_pullup 0b1 1
      set_gpio_cfg 0b10 1
      set_gpio 0b10
      get_gpio g
      pck_start
      pck_add g
      pck_end
      """
    let first = try await Self.run(script, pins: pins)
    // Pin 0 pulled up, pin 1 an output set high, pin 3 driven high.
    #expect(first.lines.first == "Pec800000Bi")
    pins.drive(0, high: false)
    pins.drive(3, high: nil)
    let second = try await Self.run(script, pins: pins)
    #expect(second.lines.first == "Pec8000002i")
  }

  @Test func aPeripheralModeOtherThanTheThreeIsRefused() {
    guard case .failure(let error) = MethodScriptParser().parse(text: "set_gpio_cfg 0b1 3") else {
      Issue.record("parsed")
      return
    }
    #expect(error.description == "!4007: Line 1, Col 18")
  }
}
