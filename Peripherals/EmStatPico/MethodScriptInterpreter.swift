import MethodScriptFormat
import Signals
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Set from outside a running script to make it stop at the next point, as `Z` does.
final class AbortSignal: Sendable {
  private let flag = Mutex(false)
  var isSet: Bool { flag.withLock { $0 } }
  func set() { flag.withLock { $0 = true } }
}

/// Thrown inside the interpreter when the script is aborted.
struct ScriptAborted: Error {}

/// Thrown by `breakloop`, caught by the innermost loop.
private struct LoopBreak: Error {}

/// Runs a parsed MethodSCRIPT on the simulated instrument and writes its
/// output lines (without `\n`) as the firmware does: `M0000`, `P…`, `*`, `L`
/// and `+` around a `loop`, `T…` for `send_string`, and an empty line at the
/// end; a runtime error ends it with `!XXXX: Line L, Col 1`.
struct MethodScriptInterpreter: Sendable {
  /// A variable's value: a real or a (32-bit) integer, its type and metadata.
  struct Variable: Sendable {
    var value: Double
    var isInteger = false
    var type: String
    var status: MeasurementStatus?
    var range: CurrentRange?
  }

  var simulation: CellSimulation
  var potentiostat: Potentiostat
  /// Extra current (A) added to every reading, by seconds since the script started.
  var background: (any SignalSource)?
  let abort: AbortSignal
  let output: @Sendable (String) async -> Void
  /// The pins, clock and wake-up events shared with the model.
  let peripherals: PicoPeripherals
  private var pins: GPIOPins { peripherals.pins }

  /// The start and length of `set_int`'s interval, and how many `await_int`s have passed.
  private var interval: (start: Double, length: Double, count: Int)?
  /// The cells behind the multiplexer (each with its own state) and the one connected (0-based).
  private var channels: [CellSimulation] = []
  private var selectedChannel = 0
  private var multiplexerConfigured = false
  private var scalars: [String: Variable] = [:]
  private var arrays: [String: [Variable]] = [:]
  private var potential = 0.0
  private var appliedCurrent = 0.0
  private var galvanostatic = false
  private var cellOn = false
  private var channel = 0
  private var package: [MethodScriptValue]?
  private var timerStart: Double?
  private var elapsed: @Sendable () -> Double = { 0 }
  private var iterations = 0

  /// The variable types `meas` takes: WE current, WE potential, board temperature.
  static let measurableTypes: Set<String> = ["ba", "ab", "ef"]
  /// The board temperature `meas … ef` reads, °C (Doppel's choice).
  static let boardTemperature = 25.0
  /// The loop id written after `M`/`C` (Doppel's choice: always 0).
  static let loopID = "0000"
  /// How often (at most) a long wait checks for an abort.
  static let abortCheckInterval = Duration.milliseconds(100)
  /// The shortest time one EIS frequency takes, and the number of periods measured.
  static let minimumFrequencyDuration = 0.05
  static let periodsPerFrequency = 2.0
  /// The device time one `loop` iteration takes at least (Doppel's choice, the order of a microcontroller's).
  static let loopIterationTime = Duration.microseconds(4)
  /// The most points one loop may have.
  static let maximumPoints = 10_000_000

  init(
    cell: ElectrochemicalCell, potentiostat: Potentiostat, background: (any SignalSource)?, abort: AbortSignal,
    multiplexerCells: [ElectrochemicalCell] = [], peripherals: PicoPeripherals = PicoPeripherals(),
    output: @escaping @Sendable (String) async -> Void
  ) {
    self.simulation = CellSimulation(cell: multiplexerCells.first ?? cell)
    self.channels = multiplexerCells.map(CellSimulation.init(cell:))
    self.potentiostat = potentiostat
    self.background = background
    self.abort = abort
    self.peripherals = peripherals
    self.output = output
  }

  /// Runs `script` to its end (or abort, or error). Returns early without
  /// further output if the task is cancelled.
  mutating func run<C: Clock<Duration>>(_ script: MethodScript, clock: C) async {
    let start = clock.now
    elapsed = { start.duration(to: clock.now).seconds }
    do {
      do {
        try await execute(script.statements, clock: clock, abortable: true)
      } catch is ScriptAborted {}
      try await execute(script.onFinished, clock: clock, abortable: false)
      cellOn = false
      await output("")
    } catch let error as MethodScriptError {
      cellOn = false
      await output("!" + error.text)
    } catch {
      // Cancelled: the device was reset or stopped.
    }
  }

  // MARK: Values

  private func fail(_ code: MethodScriptError.Code, _ line: Int) -> MethodScriptError {
    MethodScriptError(code, line: line, column: 1)
  }

  private func index(_ argument: MethodScript.Argument, in array: String, line: Int) throws -> Int {
    let index = try read(argument, line: line).value
    guard let count = arrays[array]?.count, index >= 0, index == index.rounded(), index < Double(count) else {
      throw fail(.argumentOutOfRange, line)
    }
    return Int(index)
  }

  private func read(_ argument: MethodScript.Argument, line: Int) throws -> Variable {
    switch argument {
    case .literal(let value): return Variable(value: value, type: "aa")
    case .integer(let value): return Variable(value: Double(Self.int32(value)), isInteger: true, type: "aa")
    case .variable(let name): return scalars[name] ?? Variable(value: 0, type: "aa")
    case .element(let name, let position):
      return arrays[name]?[try index(position, in: name, line: line)] ?? Variable(value: 0, type: "aa")
    }
  }

  private func number(_ argument: MethodScript.Argument, line: Int) throws -> Double {
    try read(argument, line: line).value
  }

  /// A count of an array's first elements: a whole number, at most its size.
  private func elementCount(_ argument: MethodScript.Argument, of size: Int, line: Int) throws -> Int {
    let count = try number(argument, line: line)
    guard count >= 0, count <= Double(size), count == count.rounded() else { throw fail(.argumentOutOfRange, line) }
    return Int(count)
  }

  private mutating func write(_ target: MethodScript.Argument, _ variable: Variable, line: Int) throws {
    switch target {
    case .variable(let name): scalars[name] = variable
    case .element(let name, let position):
      let at = try index(position, in: name, line: line)
      arrays[name]?[at] = variable
    case .literal, .integer: throw fail(.invalidArgument, line)
    }
  }

  /// Wraps to a 32-bit signed integer, as the firmware's integers are (Doppel's assumption).
  static func int32(_ value: Int) -> Int { Int(Int32(truncatingIfNeeded: value)) }

  private static func integer(_ variable: Variable) -> Int? {
    guard variable.isInteger, let value = Int(exactly: variable.value) else { return nil }
    return value
  }

  private func arithmetic(_ operation: MethodScript.Arithmetic, _ x: Variable, _ y: Variable, line: Int) throws
    -> Variable
  {
    var result = x
    if let a = Self.integer(x), let b = Self.integer(y) {
      let value: Int
      switch operation {
      case .add: value = a &+ b
      case .subtract: value = a &- b
      case .multiply: value = a &* b
      case .divide:
        guard b != 0 else { throw fail(.argumentOutOfRange, line) }
        value = a / b
      case .power:
        guard b >= 0 else {
          result.isInteger = false
          result.value = pow(Double(a), Double(b))
          return result
        }
        value = Int(clamping: Int64(pow(Double(a), Double(b)).clamped(to: -9e18...9e18)))
      case .bitAnd: value = a & b
      case .bitOr: value = a | b
      case .bitXor: value = a ^ b
      case .shiftLeft, .shiftRight:
        guard (0..<32).contains(b) else { throw fail(.argumentOutOfRange, line) }
        let bits = UInt32(truncatingIfNeeded: a)
        value = Int(Int32(bitPattern: operation == .shiftLeft ? bits << UInt32(b) : bits >> UInt32(b)))
      }
      result.value = Double(Self.int32(value))
      return result
    }
    let (a, b) = (x.value, y.value)
    switch operation {
    case .add: result.value = a + b
    case .subtract: result.value = a - b
    case .multiply: result.value = a * b
    case .divide:
      guard b != 0 else { throw fail(.argumentOutOfRange, line) }
      result.value = a / b
    case .power: result.value = pow(a, b)
    case .bitAnd, .bitOr, .bitXor, .shiftLeft, .shiftRight:
      // Bit operations take integers only.
      throw fail(.invalidArgument, line)
    }
    result.isInteger = false
    guard result.value.isFinite else { throw fail(.argumentOutOfRange, line) }
    return result
  }

  private func unary(_ operation: MethodScript.UnaryOperation, _ x: Variable, line: Int) throws -> Variable {
    var result = x
    switch operation {
    case .bitInvert:
      guard let a = Self.integer(x) else { throw fail(.invalidArgument, line) }
      result.value = Double(Self.int32(~a))
    case .integerToFloat:
      result.isInteger = false
    case .floatToInteger:
      let truncated = x.value.rounded(.towardZero)
      guard truncated.isFinite, abs(truncated) <= Double(Int32.max) else { throw fail(.argumentOutOfRange, line) }
      result.value = truncated
      result.isInteger = true
    case .naturalLog:
      guard x.value > 0 else { throw fail(.argumentOutOfRange, line) }
      result.value = log(x.value)
      result.isInteger = false
    }
    return result
  }

  private func text(_ parts: [MethodScript.TextPart], line: Int) throws -> String {
    var text = ""
    for part in parts {
      switch part {
      case .text(let literal): text += literal
      case .value(let argument):
        let variable = try read(argument, line: line)
        if let integer = Self.integer(variable) {
          text += String(integer)
        } else {
          text += "\(variable.value)"
        }
      }
    }
    return text
  }

  // MARK: Statements

  private func sleep<C: Clock<Duration>>(until deadline: C.Instant, clock: C, abortable: Bool) async throws {
    while true {
      if abortable && abort.isSet { throw ScriptAborted() }
      let now = clock.now
      if now >= deadline { return }
      let next = min(deadline, now.advanced(by: Self.abortCheckInterval))
      try await clock.sleep(until: next, tolerance: nil)
    }
  }

  private mutating func execute<C: Clock<Duration>>(
    _ statements: [MethodScript.Statement], clock: C, abortable: Bool
  ) async throws {
    for statement in statements {
      try await execute(statement, clock: clock, abortable: abortable)
    }
  }

  private mutating func execute<C: Clock<Duration>>(
    _ statement: MethodScript.Statement, clock: C, abortable: Bool
  ) async throws {
    let line = statement.line
    switch statement.command {
    case .declare(let name):
      scalars[name] = Variable(value: 0, type: "aa")
    case .declareArray(let name, let size):
      let count = try number(size, line: line)
      guard count >= 1, count <= 10_000, count == count.rounded() else { throw fail(.argumentOutOfRange, line) }
      arrays[name] = Array(repeating: Variable(value: 0, type: "aa"), count: Int(count))
    case .store(let target, let argument, let type):
      var variable = try read(argument, line: line)
      variable.type = type
      variable.status = nil
      variable.range = nil
      try write(target, variable, line: line)
    case .arithmetic(let operation, let target, let operand):
      let result = try arithmetic(
        operation, try read(target, line: line), try read(operand, line: line), line: line)
      try write(target, result, line: line)
    case .copy(let source, let target):
      var variable = try read(source, line: line)
      if case .literal = source { variable.type = (try? read(target, line: line))?.type ?? "aa" }
      if case .integer = source { variable.type = (try? read(target, line: line))?.type ?? "aa" }
      try write(target, variable, line: line)
    case .unary(let operation, let target):
      try write(target, try unary(operation, try read(target, line: line), line: line), line: line)
    case .arraySet(let name, let position, let value):
      let at = try index(position, in: name, line: line)
      let element = try read(value, line: line)
      arrays[name]?[at] = element
    case .arrayGet(let name, let position, let target):
      let at = try index(position, in: name, line: line)
      try write(target, arrays[name]?[at] ?? Variable(value: 0, type: "aa"), line: line)
    case .mean(let name, let target):
      let elements = arrays[name] ?? []
      let sum = elements.reduce(0) { $0 + $1.value }
      let mean = Variable(value: sum / Double(max(1, elements.count)), type: elements.first?.type ?? "aa")
      try write(target, mean, line: line)
    case .alterType(let target, let type):
      var variable = try read(target, line: line)
      variable.type = type
      try write(target, variable, line: line)
    case .smooth(let source, let count, let target, let strength):
      let values = arrays[source] ?? []
      let n = try count.map { try elementCount($0, of: values.count, line: line) } ?? values.count
      guard let window = ArrayAnalysis.smoothingWindow(strength: try number(strength, line: line)),
        var destination = arrays[target], destination.count >= n
      else { throw fail(.argumentOutOfRange, line) }
      let smoothed = ArrayAnalysis.smooth(values.prefix(n).map(\.value), window: window)
      for i in 0..<n {
        destination[i] = values[i]
        destination[i].value = smoothed[i]
        destination[i].isInteger = false
      }
      arrays[target] = destination
    case .linearFit(let x, let y, let slope, let intercept):
      let ys = arrays[y] ?? []
      guard let fit = ArrayAnalysis.linearFit(x: (arrays[x] ?? []).map(\.value), y: ys.map(\.value)) else {
        throw fail(.argumentOutOfRange, line)
      }
      let type = ys.first?.type ?? "aa"
      try write(slope, Variable(value: fit.slope, type: type), line: line)
      try write(intercept, Variable(value: fit.intercept, type: type), line: line)
    case .peakDetect(let source, let count, let indices, let heights, let direction, let minimumHeight):
      let values = arrays[source] ?? []
      let n = try elementCount(count, of: values.count, line: line)
      let way = try number(direction, line: line)
      guard way == 0 || way == 1, var indexArray = arrays[indices], var heightArray = arrays[heights] else {
        throw fail(.argumentOutOfRange, line)
      }
      let peaks = ArrayAnalysis.peaks(
        values.prefix(n).map(\.value), minimumHeight: try number(minimumHeight, line: line), maxima: way == 0)
      let type = values.first?.type ?? "aa"
      for k in indexArray.indices {
        indexArray[k] = Variable(value: Double(k < peaks.count ? peaks[k].index : -1), isInteger: true, type: "aa")
      }
      for k in heightArray.indices {
        heightArray[k] = Variable(value: k < peaks.count ? peaks[k].height : 0, type: type)
      }
      arrays[indices] = indexArray
      arrays[heights] = heightArray
    case .batteryPercent(let target):
      // The Pico module has no battery gauge: "unavailable", as the Sensit
      // Wearable answers while charging.
      try write(target, Variable(value: -1, isInteger: true, type: "aa"), line: line)
    case .loop(let condition, let body):
      await output("L")
      do {
        while try holds(condition, line: line) {
          try await iterate(clock: clock, abortable: abortable)
          try await execute(body, clock: clock, abortable: abortable)
        }
      } catch is LoopBreak {
      } catch let aborted as ScriptAborted {
        await output("+")
        throw aborted
      }
      await output("+")
    case .conditional(let branches):
      for branch in branches {
        if let condition = branch.condition, !(try holds(condition, line: line)) { continue }
        try await execute(branch.body, clock: clock, abortable: abortable)
        break
      }
    case .breakLoop:
      throw LoopBreak()
    case .sendString(let parts):
      await output("T" + (try text(parts, line: line)))
    case .setChannel(let number):
      channel = number
    case .setMode(let mode):
      guard channel == 0 else { break }
      if mode == 2 { potentiostat.setHighSpeed(false) }
      if mode == 3 { potentiostat.setHighSpeed(true) }
      galvanostatic = mode == 6
    case .setMaxBandwidth, .setPotentialRange, .noEffect:
      break
    case .setCurrentRange(let argument):
      let amps = try number(argument, line: line)
      guard amps > 0 else { throw fail(.argumentOutOfRange, line) }
      potentiostat.setRange(covering: amps)
    case .setAutoranging(let low, let high):
      let (a, b) = (try number(low, line: line), try number(high, line: line))
      guard a >= 0, b >= 0, max(a, b) > 0 else { throw fail(.argumentOutOfRange, line) }
      potentiostat.setAutoranging(from: a, to: b)
    case .gpioConfigure(let mask, let mode):
      guard let mode = GPIOPins.Mode(rawValue: Int(exactly: try number(mode, line: line)) ?? -1) else {
        throw fail(.argumentOutOfRange, line)
      }
      let before = pins.outputs
      pins.configure(try bits(mask, line: line), as: mode)
      if pins.outputs != before { await outputsChanged(pins.outputs) }
    case .gpioSet(let value):
      let before = pins.outputs
      let after = pins.setOutputs(try bits(value, line: line))
      if after != before { await outputsChanged(after) }
    case .gpioSetMasked(let mask, let level):
      let before = pins.outputs
      let after = pins.setOutputs(try bits(mask, line: line), high: try number(level, line: line) != 0)
      if after != before { await outputsChanged(after) }
    case .gpioPullUp(let mask, let enable):
      pins.setPullUps(try bits(mask, line: line), enabled: try number(enable, line: line) != 0)
    case .gpioGet(let target):
      try write(target, Variable(value: Double(pins.read()), isInteger: true, type: "ec"), line: line)
    case .hibernate(let sources, let seconds):
      let mask = try bits(sources, line: line)
      guard (1...7).contains(mask) else { throw fail(.argumentOutOfRange, line) }
      try await hibernate(
        sources: mask, seconds: max(0, try number(seconds, line: line)), clock: clock, abortable: abortable)
    case .rtcSet(let fields):
      let values = try fields.map { try number($0, line: line) }
      guard values.allSatisfy({ $0 == $0.rounded() && abs($0) < 1e6 }) else { throw fail(.argumentOutOfRange, line) }
      let date = RealTimeClock.DateTime(
        year: Int(values[0]), month: Int(values[1]), day: Int(values[2]), hour: Int(values[3]),
        minute: Int(values[4]), second: Int(values[5]))
      guard peripherals.clock.set(date) else { throw fail(.argumentOutOfRange, line) }
    case .rtcGet(let targets):
      let now = peripherals.clock.now
      for (target, value) in zip(targets, [now.year, now.month, now.day, now.hour, now.minute, now.second]) {
        try write(target, Variable(value: Double(value), isInteger: true, type: "aa"), line: line)
      }
    case .multiplexerConfigure(let type, let flags):
      guard !channels.isEmpty, (1...4).contains(try number(type, line: line)) else {
        throw fail(.argumentOutOfRange, line)
      }
      _ = try bits(flags, line: line)
      multiplexerConfigured = true
    case .multiplexerSelect(let argument):
      let channel = try number(argument, line: line)
      guard multiplexerConfigured, channel >= 1, channel == channel.rounded(), channel <= Double(channels.count) else {
        throw fail(.argumentOutOfRange, line)
      }
      channels[selectedChannel] = simulation
      selectedChannel = Int(channel) - 1
      simulation = channels[selectedChannel]
    case .multiplexerChannelCount(let target):
      let count = multiplexerConfigured ? channels.count : 0
      try write(target, Variable(value: Double(count), isInteger: true, type: "ea"), line: line)
    case .setInterval(let argument):
      interval = (elapsed(), try positiveNumber(argument, line: line), 0)
    case .awaitInterval:
      guard var running = interval else { throw fail(.invalidArgument, line) }
      running.count += 1
      interval = running
      let due = running.start + Double(running.count) * running.length
      let wait = max(0, due - elapsed())
      hold(for: wait)
      try await sleep(until: clock.now.advanced(by: .seconds(wait)), clock: clock, abortable: abortable)
    case .setPotential(let argument):
      potential = try number(argument, line: line)
    case .setCurrent(let argument):
      appliedCurrent = try number(argument, line: line)
    case .cellOn:
      cellOn = true
    case .cellOff:
      cellOn = false
    case .wait(let argument):
      let seconds = max(0, try number(argument, line: line))
      hold(for: seconds)
      try await sleep(until: clock.now.advanced(by: .seconds(seconds)), clock: clock, abortable: abortable)
    case .timerStart:
      timerStart = elapsed()
    case .timerGet(let target):
      try write(target, Variable(value: elapsed() - (timerStart ?? 0), type: "eb"), line: line)
    case .measure(let target, let type, let interval):
      let seconds = try interval.map { max(0, try number($0, line: line)) } ?? 0
      if seconds > 0 {
        try await sleep(until: clock.now.advanced(by: .seconds(seconds)), clock: clock, abortable: abortable)
      }
      try write(target, measure(type, over: seconds), line: line)
    case .packageStart:
      package = []
    case .packageAdd(let argument):
      let value = Self.encode(try read(argument, line: line))
      package?.append(value)
    case .packageEnd:
      if let values = package { await output(MethodScriptPackage(values).line) }
      package = nil
    case .linearSweep(let sweep, let body):
      let points = try staircase(
        from: number(sweep.begin, line: line), to: number(sweep.end, line: line),
        step: number(sweep.step, line: line), line: line)
      let interval = abs(try number(sweep.step, line: line)) / (try positiveNumber(sweep.rate, line: line))
      try await potentialLoop(
        scans: [points], interval: interval, names: (sweep.potential, sweep.current), body: body, clock: clock,
        abortable: abortable, line: line)
    case .cyclicSweep(let sweep, let body):
      let begin = try number(sweep.begin, line: line)
      let vertices = [try number(sweep.vertex1, line: line), try number(sweep.vertex2, line: line), begin]
      let step = abs(try number(sweep.step, line: line))
      let rate = try positiveNumber(sweep.rate, line: line)
      guard step > 0 else { throw fail(.argumentOutOfRange, line) }
      var scans: [[Double]] = []
      for scan in 0..<sweep.scans {
        var points: [Double] = scan == 0 ? [begin] : []
        var e = begin
        for target in vertices {
          while abs(target - e) > step * 1e-9 {
            e = abs(target - e) <= step * (1 + 1e-9) ? target : e + (target > e ? step : -step)
            points.append(e)
          }
        }
        guard points.count <= Self.maximumPoints else { throw fail(.argumentOutOfRange, line) }
        scans.append(points)
      }
      try await potentialLoop(
        scans: scans, interval: step / rate, names: (sweep.potential, sweep.current), body: body, clock: clock,
        abortable: abortable, line: line)
    case .chronoamperometry(let ca, let body):
      let dc = try number(ca.dc, line: line)
      let interval = try positiveNumber(ca.interval, line: line)
      let count = try pointCount(duration: number(ca.duration, line: line), interval: interval, line: line)
      potential = dc
      try await potentialLoop(
        scans: [Array(repeating: dc, count: count)], interval: interval, names: (ca.potential, ca.current),
        body: body, clock: clock, abortable: abortable, line: line)
    case .impedance(let eis, let body):
      try await impedanceLoop(
        frequency: eis.frequency, zReal: eis.zReal, zImaginary: eis.zImaginary,
        amplitude: number(eis.amplitude, line: line), first: number(eis.startFrequency, line: line),
        last: number(eis.endFrequency, line: line), count: number(eis.count, line: line),
        dc: number(eis.dc, line: line), galvanostatic: false, body: body, line: line, clock: clock,
        abortable: abortable)
    case .technique(let technique, let body):
      try await run(technique, body: body, line: line, clock: clock, abortable: abortable)
    }
  }

  private func outputsChanged(_ outputs: UInt32) async {
    await peripherals.event("gpio", "outputs 0b" + String(outputs, radix: 2))
  }

  /// Sleeps without output until a wake-up source in `sources` fires (the
  /// timer after `seconds`); the cell keeps its potential, arrays lose their
  /// contents (zeros), as PalmSens describes the Pico's hibernation. `Z`
  /// still aborts.
  private mutating func hibernate<C: Clock<Duration>>(
    sources: UInt32, seconds: Double, clock: C, abortable: Bool
  ) async throws {
    peripherals.wake.clear()
    await peripherals.event("hibernate", "sources 0x" + String(sources, radix: 16))
    let start = clock.now
    let deadline = sources & WakeEvents.timer != 0 ? start.advanced(by: .seconds(seconds)) : nil
    while !peripherals.wake.any(of: sources & (WakeEvents.communication | WakeEvents.wakePin)) {
      if abortable && abort.isSet { throw ScriptAborted() }
      let now = clock.now
      if let deadline, now >= deadline { break }
      let next = min(deadline ?? now.advanced(by: Self.abortCheckInterval), now.advanced(by: Self.abortCheckInterval))
      try await clock.sleep(until: next, tolerance: nil)
    }
    hold(for: start.duration(to: clock.now).seconds)
    for name in arrays.keys { arrays[name] = arrays[name]?.map { _ in Variable(value: 0, type: "aa") } }
    await peripherals.event("wake", "after \(start.duration(to: clock.now).seconds) s")
  }

  /// A pin mask or level pattern: a non-negative whole number.
  private func bits(_ argument: MethodScript.Argument, line: Int) throws -> UInt32 {
    let value = try number(argument, line: line)
    guard value >= 0, value <= Double(UInt32.max), value == value.rounded() else {
      throw fail(.argumentOutOfRange, line)
    }
    return UInt32(value)
  }

  private func holds(_ condition: MethodScript.Condition, line: Int) throws -> Bool {
    condition.comparison.holds(try number(condition.lhs, line: line), try number(condition.rhs, line: line))
  }

  /// A `loop` iteration: stops on `Z`, and takes device time as the
  /// firmware's would (`loopIterationTime` every 256 iterations), so that an
  /// endless loop lets other work and virtual time go on.
  private mutating func iterate<C: Clock<Duration>>(clock: C, abortable: Bool) async throws {
    iterations &+= 1
    if abortable && abort.isSet { throw ScriptAborted() }
    if iterations % 256 == 0 {
      try await clock.sleep(until: clock.now.advanced(by: Self.loopIterationTime * 256), tolerance: nil)
    }
  }

  private static func encode(_ variable: Variable) -> MethodScriptValue {
    let type = MethodScriptVariableType(code: variable.type) ?? .unknown
    let countType = ["ea", "ec", "ee"].contains(variable.type)
    if variable.isInteger || countType, variable.value == variable.value.rounded(), abs(variable.value) < 1e8 {
      return MethodScriptValue(type: type, integer: Int(variable.value))
    }
    return MethodScriptValue(type: type, value: variable.value, status: variable.status, currentRange: variable.range)
  }

  // MARK: The cell

  /// Holds the applied potential (or current, galvanostatic) for `seconds`.
  private mutating func hold(for seconds: Double) {
    if galvanostatic {
      _ = simulation.step(
        current: appliedCurrent, duration: seconds, cellOn: cellOn, limit: Potentiostat.complianceVoltage)
    } else {
      _ = simulation.step(potential: potential, duration: seconds, cellOn: cellOn)
    }
  }

  private mutating func measure(_ type: String, over seconds: Double) -> Variable {
    switch type {
    case "ba":
      let current: Double
      if galvanostatic {
        _ = simulation.step(
          current: appliedCurrent, duration: seconds, cellOn: cellOn, limit: Potentiostat.complianceVoltage)
        current = cellOn ? appliedCurrent : 0
      } else {
        current = simulation.step(potential: potential, duration: seconds, cellOn: cellOn) + backgroundCurrent()
      }
      return currentReading(current)
    case "ab":
      let e: Double
      if galvanostatic {
        e = simulation.step(
          current: appliedCurrent, duration: seconds, cellOn: cellOn, limit: Potentiostat.complianceVoltage)
      } else if cellOn {
        _ = simulation.step(potential: potential, duration: seconds, cellOn: true)
        e = potential
      } else {
        _ = simulation.step(potential: potential, duration: seconds, cellOn: false)
        e = simulation.openCircuitPotential
      }
      return Variable(value: potentiostat.measure(potential: e), type: "ab")
    default:
      hold(for: seconds)
      return Variable(value: Self.boardTemperature, type: type)
    }
  }

  private mutating func currentReading(_ current: Double) -> Variable {
    let reading = potentiostat.measure(current: current)
    return Variable(value: reading.value, type: "ba", status: reading.status, range: reading.range)
  }

  private mutating func backgroundCurrent() -> Double {
    guard var source = background else { return 0 }
    let value = source.value(at: elapsed()) ?? 0
    background = source
    return value
  }

  // MARK: Measurement loops

  private func positiveNumber(_ argument: MethodScript.Argument, line: Int) throws -> Double {
    let value = try number(argument, line: line)
    guard value > 0, value.isFinite else { throw fail(.argumentOutOfRange, line) }
    return value
  }

  private func pointCount(duration: Double, interval: Double, line: Int) throws -> Int {
    guard duration >= 0, interval > 0 else { throw fail(.argumentOutOfRange, line) }
    let count = (duration / interval + 1e-9).rounded(.down)
    guard count <= Double(Self.maximumPoints) else { throw fail(.argumentOutOfRange, line) }
    return Int(count)
  }

  /// The staircase from `begin` towards `end` in steps of |step|, both ends included.
  private func staircase(from begin: Double, to end: Double, step: Double, line: Int) throws -> [Double] {
    let step = abs(step)
    guard step > 0, begin.isFinite, end.isFinite else { throw fail(.argumentOutOfRange, line) }
    let count = (abs(end - begin) / step + 1e-9).rounded(.down) + 1
    guard count <= Double(Self.maximumPoints) else { throw fail(.argumentOutOfRange, line) }
    let direction: Double = end >= begin ? 1 : -1
    return (0..<Int(count)).map { begin + direction * Double($0) * step }
  }

  /// When a loop's points are due, in seconds from the loop's start.
  private enum Schedule {
    /// Point n at (n + 1) × interval.
    case every(Double)
    /// Point n at times[n].
    case at([Double])

    func time(of n: Int) -> Double {
      switch self {
      case .every(let interval): Double(n + 1) * interval
      case .at(let times): times[n]
      }
    }
  }

  /// Runs a measurement loop: `M0000`, then for each point (on its
  /// schedule) `point` and the body, `Cxxxx`/`-` around each scan when there
  /// are several, `*` at the end. `breakloop` ends it early; `Z` ends it and
  /// rethrows.
  private mutating func measurementLoop<C: Clock<Duration>>(
    scans: [Int], schedule: Schedule, body: [MethodScript.Statement], clock: C, abortable: Bool,
    point: (inout MethodScriptInterpreter, Int) throws -> Void
  ) async throws {
    await output("M" + Self.loopID)
    simulation.resetDiffusion()
    let start = clock.now
    var n = 0
    let scanned = scans.count > 1
    var inScan = false
    do {
      for (index, count) in scans.enumerated() {
        if scanned {
          await output("C" + Self.hex4(index))
          inScan = true
        }
        for _ in 0..<count {
          try await sleep(until: start.advanced(by: .seconds(schedule.time(of: n))), clock: clock, abortable: abortable)
          try point(&self, n)
          n += 1
          try await execute(body, clock: clock, abortable: abortable)
        }
        if scanned {
          await output("-")
          inScan = false
        }
      }
    } catch let stop where stop is ScriptAborted || stop is LoopBreak {
      if inScan { await output("-") }
      await output("*")
      if stop is ScriptAborted { throw stop }
      return
    }
    await output("*")
  }

  /// LSV, CV and CA: each point holds its potential for `interval` and reads the current at the end.
  private mutating func potentialLoop<C: Clock<Duration>>(
    scans: [[Double]], interval: Double, names: (potential: String, current: String),
    body: [MethodScript.Statement], clock: C, abortable: Bool, line: Int
  ) async throws {
    let points = scans.flatMap { $0 }
    try await measurementLoop(
      scans: scans.map(\.count), schedule: .every(interval), body: body, clock: clock,
      abortable: abortable
    ) { interpreter, n in
      let e = points[n]
      interpreter.potential = e
      let current =
        interpreter.simulation.step(potential: e, duration: interval, cellOn: interpreter.cellOn)
        + interpreter.backgroundCurrent()
      interpreter.scalars[names.potential] = Variable(value: e, type: "da")
      interpreter.scalars[names.current] = interpreter.currentReading(current)
    }
  }

  /// Holds `e` for `seconds` and returns the current at the end (with the background).
  private mutating func current(at e: Double, for seconds: Double) -> Double {
    potential = e
    return simulation.step(potential: e, duration: seconds, cellOn: cellOn) + backgroundCurrent()
  }

  private mutating func run<C: Clock<Duration>>(
    _ technique: MethodScript.Technique, body: [MethodScript.Statement], line: Int, clock: C, abortable: Bool
  ) async throws {
    let p = try technique.parameters.map { try number($0, line: line) }
    let out = technique.outputs
    switch technique.kind {
    case .differentialPulse:
      // Ebegin Eend Estep Epulse tPulse rate: each point holds E for
      // tInterval − tPulse, then E + Epulse for tPulse; I = i(pulse) − i(base).
      let points = try staircase(from: p[0], to: p[1], step: p[2], line: line)
      let (pulse, pulseTime) = (p[3], try positiveNumber(technique.parameters[4], line: line))
      let interval = abs(p[2]) / (try positiveNumber(technique.parameters[5], line: line))
      guard pulseTime < interval else { throw fail(.argumentOutOfRange, line) }
      try await measurementLoop(
        scans: [points.count], schedule: .every(interval), body: body, clock: clock, abortable: abortable
      ) { interpreter, n in
        let base = interpreter.potentiostat.measure(
          current: interpreter.current(at: points[n], for: interval - pulseTime))
        let top = interpreter.potentiostat.measure(current: interpreter.current(at: points[n] + pulse, for: pulseTime))
        interpreter.potential = points[n]
        interpreter.scalars[out[0]] = Variable(value: points[n], type: "da")
        interpreter.scalars[out[1]] = Variable(
          value: top.value - base.value, type: "ba", status: top.status, range: top.range)
      }
    case .squareWave:
      // Ebegin Eend Estep Eamplitude frequency: each period holds E ± Eamplitude
      // for half a period each; I = i(forward) − i(reverse).
      let points = try staircase(from: p[0], to: p[1], step: p[2], line: line)
      let period = 1 / (try positiveNumber(technique.parameters[4], line: line))
      let direction: Double = p[1] >= p[0] ? 1 : -1
      let amplitude = p[3] * direction
      try await measurementLoop(
        scans: [points.count], schedule: .every(period), body: body, clock: clock, abortable: abortable
      ) { interpreter, n in
        let forward = interpreter.currentReading(interpreter.current(at: points[n] + amplitude, for: period / 2))
        let reverse = interpreter.currentReading(interpreter.current(at: points[n] - amplitude, for: period / 2))
        interpreter.potential = points[n]
        interpreter.scalars[out[0]] = Variable(value: points[n], type: "da")
        interpreter.scalars[out[1]] = Variable(
          value: forward.value - reverse.value, type: "ba", status: forward.status, range: forward.range)
        interpreter.scalars[out[2]] = forward
        interpreter.scalars[out[3]] = reverse
      }
    case .normalPulse:
      // Ebegin Eend Estep tPulse rate: rest at Ebegin, pulses to each E for tPulse.
      let points = try staircase(from: p[0], to: p[1], step: p[2], line: line)
      let pulseTime = try positiveNumber(technique.parameters[3], line: line)
      let interval = abs(p[2]) / (try positiveNumber(technique.parameters[4], line: line))
      guard pulseTime < interval else { throw fail(.argumentOutOfRange, line) }
      let rest = p[0]
      try await measurementLoop(
        scans: [points.count], schedule: .every(interval), body: body, clock: clock, abortable: abortable
      ) { interpreter, n in
        _ = interpreter.current(at: rest, for: interval - pulseTime)
        let reading = interpreter.currentReading(interpreter.current(at: points[n], for: pulseTime))
        interpreter.potential = rest
        interpreter.scalars[out[0]] = Variable(value: points[n], type: "da")
        interpreter.scalars[out[1]] = reading
      }
    case .alternatingCurrent:
      // Ebegin Eend Estep rate Eamplitude(rms) frequency: a staircase with a
      // sine on top; DC current as LSV, AC current Eac / |Z(f, E)|.
      let points = try staircase(from: p[0], to: p[1], step: p[2], line: line)
      let interval = abs(p[2]) / (try positiveNumber(technique.parameters[3], line: line))
      let amplitude = try positiveNumber(technique.parameters[4], line: line)
      let frequency = try positiveNumber(technique.parameters[5], line: line)
      try await measurementLoop(
        scans: [points.count], schedule: .every(interval), body: body, clock: clock, abortable: abortable
      ) { interpreter, n in
        let e = points[n]
        let dc = interpreter.currentReading(interpreter.current(at: e, for: interval))
        let z =
          interpreter.cellOn
          ? interpreter.simulation.cell.impedance(at: frequency, potential: e) : (real: 1e12, imaginary: 0)
        let reading = interpreter.potentiostat.measure(impedance: z, amplitude: amplitude)
        let magnitude = (reading.real * reading.real + reading.imaginary * reading.imaginary).squareRoot()
        interpreter.scalars[out[0]] = Variable(value: e, type: "da")
        interpreter.scalars[out[1]] = dc
        interpreter.scalars[out[2]] = Variable(value: amplitude, type: "ch")
        interpreter.scalars[out[3]] = Variable(
          value: amplitude / max(magnitude, 1e-12), type: "cj", status: reading.status, range: reading.range)
        interpreter.scalars[out[4]] = Variable(
          value: reading.real, type: "cc", status: reading.status, range: reading.range)
        interpreter.scalars[out[5]] = Variable(value: reading.imaginary, type: "cd", status: reading.status)
      }
    case .linearSweepPotentiometry:
      // Ibegin Iend Istep rate (A, A/s): a current staircase; E read at each step's end.
      let points = try staircase(from: p[0], to: p[1], step: p[2], line: line)
      let interval = abs(p[2]) / (try positiveNumber(technique.parameters[3], line: line))
      try await galvanostaticLoop(
        currents: points, interval: interval, names: (out[0], out[1]), body: body, clock: clock,
        abortable: abortable)
    case .chronopotentiometry:
      // Idc tInterval tRun
      let interval = try positiveNumber(technique.parameters[1], line: line)
      let count = try pointCount(duration: p[2], interval: interval, line: line)
      try await galvanostaticLoop(
        currents: Array(repeating: p[0], count: count), interval: interval, names: (out[0], out[1]), body: body,
        clock: clock, abortable: abortable)
    case .pulsedAmperometric:
      // Edc Epulse tPulse tInterval tRun mode (1 DC, 2 pulse, 3 differential).
      let (dc, pulse) = (p[0], p[1])
      let pulseTime = try positiveNumber(technique.parameters[2], line: line)
      let interval = try positiveNumber(technique.parameters[3], line: line)
      let count = try pointCount(duration: p[4], interval: interval, line: line)
      let mode = p[5]
      guard pulseTime < interval, [1, 2, 3].contains(mode) else { throw fail(.argumentOutOfRange, line) }
      try await measurementLoop(
        scans: [count], schedule: .every(interval), body: body, clock: clock, abortable: abortable
      ) { interpreter, _ in
        let base = interpreter.currentReading(interpreter.current(at: dc, for: interval - pulseTime))
        let top = interpreter.currentReading(interpreter.current(at: pulse, for: pulseTime))
        var reading = mode == 1 ? base : top
        if mode == 3 { reading.value = top.value - base.value }
        interpreter.potential = dc
        interpreter.scalars[out[0]] = Variable(value: mode == 2 ? pulse : dc, type: "da")
        interpreter.scalars[out[1]] = reading
      }
    case .openCircuit:
      // tInterval tRun: the cell is disconnected; E is its open-circuit potential.
      let interval = try positiveNumber(technique.parameters[0], line: line)
      let count = try pointCount(duration: p[1], interval: interval, line: line)
      cellOn = false
      try await measurementLoop(
        scans: [count], schedule: .every(interval), body: body, clock: clock, abortable: abortable
      ) { interpreter, _ in
        _ = interpreter.simulation.step(potential: interpreter.potential, duration: interval, cellOn: false)
        let e = interpreter.potentiostat.measure(potential: interpreter.simulation.openCircuitPotential)
        interpreter.scalars[out[0]] = Variable(value: e, type: "ab")
      }
    case .galvanostaticImpedance:
      try await impedanceLoop(
        frequency: out[0], zReal: out[1], zImaginary: out[2], amplitude: p[0], first: p[1], last: p[2], count: p[3],
        dc: p[4], galvanostatic: true, body: body, line: line, clock: clock, abortable: abortable)
    }
  }

  /// LSP and CP: each point forces its current for `interval` and reads E at the end.
  private mutating func galvanostaticLoop<C: Clock<Duration>>(
    currents: [Double], interval: Double, names: (potential: String, current: String),
    body: [MethodScript.Statement], clock: C, abortable: Bool
  ) async throws {
    try await measurementLoop(
      scans: [currents.count], schedule: .every(interval), body: body, clock: clock, abortable: abortable
    ) { interpreter, n in
      let i = currents[n]
      interpreter.appliedCurrent = i
      let e = interpreter.simulation.step(
        current: i, duration: interval, cellOn: interpreter.cellOn, limit: Potentiostat.complianceVoltage)
      interpreter.scalars[names.potential] = Variable(value: interpreter.potentiostat.measure(potential: e), type: "ab")
      interpreter.scalars[names.current] = interpreter.currentReading(interpreter.cellOn ? i : 0)
    }
  }

  /// EIS (potential amplitude around a DC potential) and GEIS (current amplitude around a DC current).
  private mutating func impedanceLoop<C: Clock<Duration>>(
    frequency: String, zReal: String, zImaginary: String, amplitude: Double, first: Double, last: Double,
    count: Double, dc: Double, galvanostatic: Bool, body: [MethodScript.Statement], line: Int, clock: C,
    abortable: Bool
  ) async throws {
    guard amplitude > 0, first > 0, last > 0, count >= 1, count <= 10_000, first.isFinite, last.isFinite else {
      throw fail(.argumentOutOfRange, line)
    }
    let n = Int(count.rounded())
    let frequencies = (0..<n).map { k in n == 1 ? first : first * pow(last / first, Double(k) / Double(n - 1)) }
    var times: [Double] = []
    var total = 0.0
    for f in frequencies {
      total += max(Self.minimumFrequencyDuration, Self.periodsPerFrequency / f)
      times.append(total)
    }
    if galvanostatic { appliedCurrent = dc } else { potential = dc }
    try await measurementLoop(
      scans: [n], schedule: .at(times), body: body, clock: clock, abortable: abortable
    ) { interpreter, k in
      let duration = k == 0 ? times[0] : times[k] - times[k - 1]
      let f = frequencies[k]
      let e: Double
      if galvanostatic {
        e = interpreter.simulation.step(
          current: dc, duration: duration, cellOn: interpreter.cellOn, limit: Potentiostat.complianceVoltage)
      } else {
        _ = interpreter.simulation.step(potential: dc, duration: duration, cellOn: interpreter.cellOn)
        e = dc
      }
      let impedance =
        interpreter.cellOn
        ? interpreter.simulation.cell.impedance(at: f, potential: e) : (real: 1e12, imaginary: 0)
      let magnitude = (impedance.real * impedance.real + impedance.imaginary * impedance.imaginary).squareRoot()
      // GEIS: the potential amplitude the current amplitude makes picks the range as in EIS.
      let potentialAmplitude = galvanostatic ? amplitude * magnitude : amplitude
      let reading = interpreter.potentiostat.measure(impedance: impedance, amplitude: potentialAmplitude)
      interpreter.scalars[frequency] = Variable(value: f, type: "dc")
      interpreter.scalars[zReal] = Variable(
        value: reading.real, type: "cc", status: reading.status, range: reading.range)
      interpreter.scalars[zImaginary] = Variable(value: reading.imaginary, type: "cd", status: reading.status)
    }
  }

  static func hex4(_ value: Int) -> String {
    let text = String(value & 0xFFFF, radix: 16, uppercase: true)
    return String(repeating: "0", count: 4 - text.count) + text
  }
}

extension Double {
  fileprivate func clamped(to range: ClosedRange<Double>) -> Double {
    Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
  }
}
