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

/// Runs a parsed MethodSCRIPT on the simulated instrument and writes its
/// output lines (without `\n`) as the firmware does: `M0000`, `P…`, `*`, and an
/// empty line at the end; a runtime error ends it with `!XXXX: Line L, Col 1`.
struct MethodScriptInterpreter: Sendable {
  struct Variable: Sendable {
    var value: Double
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

  private var variables: [String: Variable] = [:]
  private var potential = 0.0
  private var cellOn = false
  private var channel = 0
  private var package: [MethodScriptValue]?
  private var timerStart: Double?
  private var elapsed: @Sendable () -> Double = { 0 }

  /// The loop id written after `M`/`C` (Doppel's choice: always 0).
  static let loopID = "0000"
  /// How often (at most) a long wait checks for an abort.
  static let abortCheckInterval = Duration.milliseconds(100)
  /// The shortest time one EIS frequency takes, and the number of periods measured.
  static let minimumFrequencyDuration = 0.05
  static let periodsPerFrequency = 2.0
  /// The most points one loop may have.
  static let maximumPoints = 10_000_000

  init(
    cell: ElectrochemicalCell, potentiostat: Potentiostat, background: (any SignalSource)?, abort: AbortSignal,
    output: @escaping @Sendable (String) async -> Void
  ) {
    self.simulation = CellSimulation(cell: cell)
    self.potentiostat = potentiostat
    self.background = background
    self.abort = abort
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

  private func value(_ argument: MethodScript.Argument) -> Double {
    switch argument {
    case .literal(let value): value
    case .variable(let name): variables[name]?.value ?? 0
    }
  }

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
    func outOfRange() -> MethodScriptError { MethodScriptError(.argumentOutOfRange, line: line, column: 1) }
    switch statement.command {
    case .declare(let name):
      variables[name] = Variable(value: 0, type: "aa")
    case .store(let name, let argument, let type):
      variables[name] = Variable(value: value(argument), type: type)
    case .arithmetic(let operation, let name, let argument):
      var variable = variables[name] ?? Variable(value: 0, type: "aa")
      let operand = value(argument)
      switch operation {
      case .add: variable.value += operand
      case .subtract: variable.value -= operand
      case .multiply: variable.value *= operand
      case .divide:
        guard operand != 0 else { throw outOfRange() }
        variable.value /= operand
      case .copy:
        if case .variable(let source) = argument, let copied = variables[source] {
          variable = copied
        } else {
          variable.value = operand
        }
      }
      variables[name] = variable
    case .setChannel(let number):
      channel = number
    case .setMode(let mode):
      guard channel == 0 else { break }
      if mode == 2 { potentiostat.setHighSpeed(false) }
      if mode == 3 { potentiostat.setHighSpeed(true) }
    case .setMaxBandwidth, .setPotentialRange, .noEffect:
      break
    case .setCurrentRange(let argument):
      let amps = value(argument)
      guard amps > 0, amps <= 5e-3 * 1.0001 else { throw outOfRange() }
      potentiostat.setRange(covering: amps)
    case .setAutoranging(let low, let high):
      let (a, b) = (value(low), value(high))
      guard a > 0, b > 0, max(a, b) <= 5e-3 * 1.0001 else { throw outOfRange() }
      potentiostat.setAutoranging(from: a, to: b)
    case .setPotential(let argument):
      potential = value(argument)
    case .cellOn:
      cellOn = true
    case .cellOff:
      cellOn = false
    case .wait(let argument):
      let seconds = max(0, value(argument))
      _ = simulation.step(potential: potential, duration: seconds, cellOn: cellOn)
      try await sleep(until: clock.now.advanced(by: .seconds(seconds)), clock: clock, abortable: abortable)
    case .timerStart:
      timerStart = elapsed()
    case .timerGet(let name):
      variables[name] = Variable(value: elapsed() - (timerStart ?? 0), type: "eb")
    case .measure(let name, let type):
      if type == "ba" {
        let current = simulation.step(potential: potential, duration: 0, cellOn: cellOn) + backgroundCurrent()
        let reading = potentiostat.measure(current: current)
        variables[name] = Variable(value: reading.value, type: "ba", status: reading.status, range: reading.range)
      } else {
        variables[name] = Variable(value: cellOn ? potential : 0, type: type)
      }
    case .packageStart:
      package = []
    case .packageAdd(let name):
      let variable = variables[name] ?? Variable(value: 0, type: "aa")
      let type = MethodScriptVariableType(code: variable.type) ?? .unknown
      if ["ea", "ec", "ee"].contains(variable.type), variable.value == variable.value.rounded(),
        abs(variable.value) < 1e8
      {
        package?.append(MethodScriptValue(type: type, integer: Int(variable.value)))
      } else {
        package?.append(
          MethodScriptValue(type: type, value: variable.value, status: variable.status, currentRange: variable.range))
      }
    case .packageEnd:
      if let values = package { await output(MethodScriptPackage(values).line) }
      package = nil
    case .linearSweep(let sweep, let body):
      let (begin, end, step, rate) = (value(sweep.begin), value(sweep.end), abs(value(sweep.step)), value(sweep.rate))
      guard step > 0, rate > 0 else { throw outOfRange() }
      let count = Int((abs(end - begin) / step + 1e-9).rounded(.down)) + 1
      guard count <= Self.maximumPoints else { throw outOfRange() }
      let direction: Double = end >= begin ? 1 : -1
      let points = (0..<count).map { begin + direction * Double($0) * step }
      try await sweepLoop(
        scans: [points], interval: step / rate, potentialName: sweep.potential, currentName: sweep.current,
        body: body, clock: clock, abortable: abortable)
    case .cyclicSweep(let sweep, let body):
      let begin = value(sweep.begin)
      let vertices = [value(sweep.vertex1), value(sweep.vertex2), begin]
      let (step, rate) = (abs(value(sweep.step)), value(sweep.rate))
      guard step > 0, rate > 0 else { throw outOfRange() }
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
        guard points.count <= Self.maximumPoints else { throw outOfRange() }
        scans.append(points)
      }
      try await sweepLoop(
        scans: scans, interval: step / rate, potentialName: sweep.potential, currentName: sweep.current, body: body,
        clock: clock, abortable: abortable)
    case .chronoamperometry(let ca, let body):
      let (dc, interval, duration) = (value(ca.dc), value(ca.interval), value(ca.duration))
      guard interval > 0, duration >= 0 else { throw outOfRange() }
      let count = Int((duration / interval + 1e-9).rounded(.down))
      guard count <= Self.maximumPoints else { throw outOfRange() }
      potential = dc
      try await sweepLoop(
        scans: [Array(repeating: dc, count: count)], interval: interval, potentialName: ca.potential,
        currentName: ca.current, body: body, clock: clock, abortable: abortable)
    case .impedance(let eis, let body):
      try await impedanceLoop(eis, body: body, line: line, clock: clock, abortable: abortable)
    }
  }

  private mutating func backgroundCurrent() -> Double {
    guard var source = background else { return 0 }
    let value = source.value(at: elapsed()) ?? 0
    background = source
    return value
  }

  private mutating func sweepLoop<C: Clock<Duration>>(
    scans: [[Double]], interval: Double, potentialName: String, currentName: String,
    body: [MethodScript.Statement], clock: C, abortable: Bool
  ) async throws {
    await output("M" + Self.loopID)
    simulation.resetDiffusion(step: interval)
    let start = clock.now
    var n = 0
    let scanned = scans.count > 1
    var inScan = false
    do {
      for (index, points) in scans.enumerated() {
        if scanned {
          await output("C" + Self.hex4(index))
          inScan = true
        }
        for e in points {
          n += 1
          try await sleep(until: start.advanced(by: .seconds(Double(n) * interval)), clock: clock, abortable: abortable)
          potential = e
          let current =
            simulation.step(potential: e, duration: interval, cellOn: cellOn, faradaic: true) + backgroundCurrent()
          let reading = potentiostat.measure(current: current)
          variables[potentialName] = Variable(value: e, type: "da")
          variables[currentName] = Variable(
            value: reading.value, type: "ba", status: reading.status, range: reading.range)
          try await execute(body, clock: clock, abortable: abortable)
        }
        if scanned {
          await output("-")
          inScan = false
        }
      }
    } catch let aborted as ScriptAborted {
      if inScan { await output("-") }
      await output("*")
      throw aborted
    }
    await output("*")
  }

  private mutating func impedanceLoop<C: Clock<Duration>>(
    _ eis: MethodScript.ImpedanceSweep, body: [MethodScript.Statement], line: Int, clock: C, abortable: Bool
  ) async throws {
    let (amplitude, first, last) = (value(eis.amplitude), value(eis.startFrequency), value(eis.endFrequency))
    let count = Int(value(eis.count).rounded())
    guard amplitude > 0, first > 0, last > 0, count >= 1, count <= 10_000 else {
      throw MethodScriptError(.argumentOutOfRange, line: line, column: 1)
    }
    potential = value(eis.dc)
    await output("M" + Self.loopID)
    let start = clock.now
    var time = 0.0
    do {
      for k in 0..<count {
        let frequency = count == 1 ? first : first * pow(last / first, Double(k) / Double(count - 1))
        time += max(Self.minimumFrequencyDuration, Self.periodsPerFrequency / frequency)
        try await sleep(until: start.advanced(by: .seconds(time)), clock: clock, abortable: abortable)
        let impedance = cellOn ? simulation.cell.impedance(at: frequency) : (real: 1e12, imaginary: 0)
        let reading = potentiostat.measure(impedance: impedance, amplitude: amplitude)
        variables[eis.frequency] = Variable(value: frequency, type: "dc")
        variables[eis.zReal] = Variable(value: reading.real, type: "cc", status: reading.status, range: reading.range)
        variables[eis.zImaginary] = Variable(value: reading.imaginary, type: "cd", status: reading.status)
        try await execute(body, clock: clock, abortable: abortable)
      }
    } catch let aborted as ScriptAborted {
      await output("*")
      throw aborted
    }
    await output("*")
  }

  static func hex4(_ value: Int) -> String {
    let text = String(value & 0xFFFF, radix: 16, uppercase: true)
    return String(repeating: "0", count: 4 - text.count) + text
  }
}
