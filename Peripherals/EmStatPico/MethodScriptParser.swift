import MethodScriptFormat

/// Parses the lines of a MethodSCRIPT (those after `e`, without the empty
/// line that ends it) into a `MethodScript`, or the first error with its line
/// and column, as the firmware does before it runs anything.
///
/// Accepts both dialects in PalmSens' examples: MethodSCRIPT 1.x
/// (`set_range ba 590u`, `set_autoranging ba 59n 590u`, `set_range_minmax da …`)
/// and the older one of the iOS example (`set_cr 500u`, `set_pot_range`,
/// `set_autoranging 59n 590u`). `#` starts a comment; indentation is allowed.
public struct MethodScriptParser: Sendable {
  /// The longest line the firmware takes, in characters.
  public var maximumLineLength = 128
  /// The most lines a script may have.
  public var maximumLines = 1024
  /// The most elements an array may have.
  public var maximumArraySize = 10_000

  public init() {}

  /// Commands accepted without effect (settings that do not change the simulation).
  static let noEffectCommands: Set<String> = [
    "set_acquisition_frac", "set_acquisition_frac_autoadjust", "set_ir_comp", "set_poly_we_mode", "notify_led",
  ]

  struct Token {
    var text: Substring
    var column: Int
  }

  private enum LoopKind {
    case lsv(MethodScript.Sweep)
    case cv(MethodScript.CyclicSweep)
    case ca(MethodScript.Chronoamperometry)
    case eis(MethodScript.ImpedanceSweep)
    case technique(MethodScript.Technique)
  }

  private enum BlockKind {
    case measurement(LoopKind)
    case loop(MethodScript.Condition)
    /// The branches closed so far, the open one's condition, and whether `else` was seen.
    case conditional(closed: [MethodScript.Branch], open: MethodScript.Condition?, sawElse: Bool)
  }

  private struct OpenBlock {
    var kind: BlockKind
    var line: Int
    var body: [MethodScript.Statement] = []
  }

  /// Parses `lines` (without line terminators; a trailing `\r` is ignored).
  public func parse(_ lines: [String]) -> Result<MethodScript, MethodScriptError> {
    do throws(MethodScriptError) {
      return .success(try parseLines(lines))
    } catch {
      return .failure(error)
    }
  }

  /// Parses a script text, one command a line (a leading `e` line is skipped,
  /// and parsing stops at the first empty line, as on the device).
  public func parse(text: String) -> Result<MethodScript, MethodScriptError> {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.first == "e" { lines.removeFirst() }
    if let end = lines.firstIndex(where: { $0.isEmpty || $0 == "\r" }) { lines = Array(lines[..<end]) }
    return parse(lines)
  }

  // The state of one parse.
  private struct State {
    var main: [MethodScript.Statement] = []
    var finished: [MethodScript.Statement] = []
    var inFinished = false
    var blocks: [OpenBlock] = []
    var packageOpen: Int?
    /// How many blocks were open at `pck_start`: a block opened inside the package may close in it.
    var packageDepth = 0
    var scalars: Set<String> = []
    var arrays: Set<String> = []

    var inMeasurementLoop: Bool {
      blocks.contains { if case .measurement = $0.kind { true } else { false } }
    }
    var inAnyLoop: Bool {
      blocks.contains {
        switch $0.kind {
        case .measurement, .loop: true
        case .conditional: false
        }
      }
    }

    mutating func append(_ statement: MethodScript.Statement) {
      if !blocks.isEmpty {
        blocks[blocks.count - 1].body.append(statement)
      } else if inFinished {
        finished.append(statement)
      } else {
        main.append(statement)
      }
    }
  }

  private func parseLines(_ lines: [String]) throws(MethodScriptError) -> MethodScript {
    guard lines.count <= maximumLines else {
      throw MethodScriptError(.scriptTooLong, line: maximumLines + 1, column: 1)
    }
    var state = State()
    for (offset, raw) in lines.enumerated() {
      var text = Substring(raw)
      if text.last == "\r" { text = text.dropLast() }
      guard text.count <= maximumLineLength else {
        throw MethodScriptError(.lineTooLong, line: offset + 1, column: maximumLineLength + 1)
      }
      let tokens = try Self.tokens(of: text, line: offset + 1)
      guard let head = tokens.first else { continue }
      var line = LineParser(
        number: offset + 1, head: head, args: Array(tokens.dropFirst()), state: state,
        maximumArraySize: maximumArraySize)
      try line.parse()
      state = line.state
    }
    if let block = state.blocks.last { throw MethodScriptError(.loopMismatch, line: block.line, column: 1) }
    if let line = state.packageOpen { throw MethodScriptError(.packageMismatch, line: line, column: 1) }
    return MethodScript(statements: state.main, onFinished: state.finished)
  }

  /// One line's command, parsed against the state so far.
  private struct LineParser {
    let number: Int
    let head: Token
    let args: [Token]
    var state: State
    let maximumArraySize: Int

    func fail(_ code: MethodScriptError.Code, _ token: Token? = nil) -> MethodScriptError {
      MethodScriptError(code, line: number, column: (token ?? head).column)
    }

    func count(_ range: ClosedRange<Int>) throws(MethodScriptError) {
      guard range.contains(args.count) else {
        throw fail(.wrongArgumentCount, args.count > range.upperBound ? args[range.upperBound] : head)
      }
    }

    /// A declared scalar, or an element `a[i]` of a declared array.
    func reference(_ token: Token) throws(MethodScriptError) -> MethodScript.Argument {
      if let open = token.text.firstIndex(of: "["), token.text.last == "]" {
        let name = token.text[..<open]
        let inner = token.text[token.text.index(after: open)..<token.text.index(before: token.text.endIndex)]
        guard MethodScriptParser.isName(name) else { throw fail(.invalidArgument, token) }
        guard state.arrays.contains(String(name)) else {
          throw fail(state.scalars.contains(String(name)) ? .invalidArgument : .undeclaredVariable, token)
        }
        let index: MethodScript.Argument
        if let literal = MethodScriptParser.literal(inner) {
          guard case .integer(let value) = literal, value >= 0 else { throw fail(.argumentOutOfRange, token) }
          index = literal
        } else {
          guard MethodScriptParser.isName(inner) else { throw fail(.invalidArgument, token) }
          guard state.scalars.contains(String(inner)) else { throw fail(.undeclaredVariable, token) }
          index = .variable(String(inner))
        }
        return .element(String(name), index: index)
      }
      guard MethodScriptParser.isName(token.text) else { throw fail(.invalidArgument, token) }
      guard state.scalars.contains(String(token.text)) else {
        throw fail(state.arrays.contains(String(token.text)) ? .invalidArgument : .undeclaredVariable, token)
      }
      return .variable(String(token.text))
    }

    /// A literal or a reference.
    func argument(_ index: Int) throws(MethodScriptError) -> MethodScript.Argument {
      let token = args[index]
      if let value = MethodScriptParser.literal(token.text) { return value }
      return try reference(token)
    }

    func positive(_ index: Int, allowZero: Bool = false) throws(MethodScriptError) -> MethodScript.Argument {
      let value = try argument(index)
      if let number = MethodScriptParser.constant(value), number < 0 || (!allowZero && number == 0) {
        throw fail(.argumentOutOfRange, args[index])
      }
      return value
    }

    /// A variable a loop or `meas` writes: declared here if new.
    mutating func newName(_ index: Int) throws(MethodScriptError) -> String {
      let token = args[index]
      guard MethodScriptParser.isName(token.text), !state.arrays.contains(String(token.text)) else {
        throw fail(.invalidArgument, token)
      }
      state.scalars.insert(String(token.text))
      return String(token.text)
    }

    /// A target a command writes: an element, or a scalar (declared here if new).
    mutating func target(_ index: Int) throws(MethodScriptError) -> MethodScript.Argument {
      if args[index].text.contains("[") { return try reference(args[index]) }
      return .variable(try newName(index))
    }

    func array(_ index: Int) throws(MethodScriptError) -> String {
      let token = args[index]
      guard MethodScriptParser.isName(token.text) else { throw fail(.invalidArgument, token) }
      guard state.arrays.contains(String(token.text)) else {
        throw fail(state.scalars.contains(String(token.text)) ? .invalidArgument : .undeclaredVariable, token)
      }
      return String(token.text)
    }

    func variableType(_ index: Int) throws(MethodScriptError) -> String {
      let token = args[index]
      let bytes = Array(token.text.utf8)
      guard bytes.count == 2, bytes.allSatisfy({ (0x61...0x7A).contains($0) }) else {
        throw fail(.invalidArgument, token)
      }
      return String(token.text)
    }

    func condition(from start: Int) throws(MethodScriptError) -> MethodScript.Condition {
      try count(start + 3...start + 3)
      guard let comparison = MethodScript.Comparison(rawValue: String(args[start + 1].text)) else {
        throw fail(.invalidArgument, args[start + 1])
      }
      return MethodScript.Condition(lhs: try argument(start), comparison: comparison, rhs: try argument(start + 2))
    }

    func text(_ token: Token) throws(MethodScriptError) -> [MethodScript.TextPart] {
      var body = token.text
      let formatted = body.hasPrefix("f\"")
      if formatted { body = body.dropFirst() }
      guard body.count >= 2, body.first == "\"", body.last == "\"" else { throw fail(.invalidArgument, token) }
      body = body.dropFirst().dropLast()
      guard formatted else { return [.text(String(body))] }
      var parts: [MethodScript.TextPart] = []
      var literal = ""
      var rest = body[...]
      while let brace = rest.firstIndex(of: "{") {
        literal += rest[..<brace]
        guard let close = rest[brace...].firstIndex(of: "}") else { throw fail(.invalidArgument, token) }
        let name = rest[rest.index(after: brace)..<close]
        let reference = try self.reference(Token(text: name, column: token.column))
        if !literal.isEmpty { parts.append(.text(literal)) }
        literal = ""
        parts.append(.value(reference))
        rest = rest[rest.index(after: close)...]
      }
      literal += rest
      if !literal.isEmpty { parts.append(.text(literal)) }
      return parts
    }

    mutating func open(_ kind: BlockKind) {
      state.blocks.append(OpenBlock(kind: kind, line: number))
    }

    mutating func parse() throws(MethodScriptError) {
      let name = String(head.text)
      var command: MethodScript.Command?
      switch name {
      case "on_finished:":
        try count(0...0)
        guard state.blocks.isEmpty else { throw fail(.loopMismatch) }
        guard state.packageOpen == nil else { throw fail(.packageMismatch) }
        guard !state.inFinished else { throw fail(.invalidArgument) }
        state.inFinished = true
      case "var":
        try count(1...1)
        command = .declare(try newName(0))
      case "array":
        try count(2...2)
        let size = try positive(1)
        if let constant = MethodScriptParser.constant(size), constant > Double(maximumArraySize) {
          throw fail(.argumentOutOfRange, args[1])
        }
        let token = args[0]
        guard MethodScriptParser.isName(token.text), !state.scalars.contains(String(token.text)) else {
          throw fail(.invalidArgument, token)
        }
        state.arrays.insert(String(token.text))
        command = .declareArray(String(token.text), size: size)
      case "store_var":
        try count(3...3)
        let value = try argument(1)
        let type = try variableType(2)
        command = .store(try target(0), value, type)
      case "copy_var":
        try count(2...2)
        let source = try argument(0)
        command = .copy(source, to: try target(1))
      case _ where MethodScript.Arithmetic(rawValue: name) != nil:
        try count(2...2)
        let target = try reference(args[0])
        command = .arithmetic(MethodScript.Arithmetic(rawValue: name)!, target, try argument(1))
      case _ where MethodScript.UnaryOperation(rawValue: name) != nil:
        try count(1...1)
        command = .unary(MethodScript.UnaryOperation(rawValue: name)!, try reference(args[0]))
      case "array_set":
        try count(3...3)
        command = .arraySet(try array(0), index: try argument(1), value: try argument(2))
      case "array_get":
        try count(3...3)
        let array = try array(0)
        let index = try argument(1)
        command = .arrayGet(array, index: index, target: try target(2))
      case "mean":
        try count(2...2)
        let array = try array(0)
        command = .mean(array, target: try target(1))
      case "alter_vartype":
        try count(2...2)
        command = .alterType(try reference(args[0]), try variableType(1))
      case "smooth":
        // PalmSens' examples show both forms: with the count (MethodSCRIPT
        // 1.3, MSExample014) and without it (1.8, MSExample024).
        try count(3...4)
        let counted = args.count == 4
        let source = try array(0)
        let count = counted ? try positive(1, allowZero: true) : nil
        let target = try array(counted ? 2 : 1)
        let strength = try argument(counted ? 3 : 2)
        if let level = MethodScriptParser.constant(strength), ArrayAnalysis.smoothingWindow(strength: level) == nil {
          throw fail(.argumentOutOfRange, args[counted ? 3 : 2])
        }
        command = .smooth(source, count: count, target: target, strength: strength)
      case "linear_fit":
        try count(4...4)
        let x = try array(0)
        let y = try array(1)
        let slope = try target(2)
        command = .linearFit(x, y, slope: slope, intercept: try target(3))
      case "peak_detect":
        try count(6...6)
        let source = try array(0)
        let count = try positive(1, allowZero: true)
        let indices = try array(2)
        let heights = try array(3)
        let direction = try argument(4)
        if let value = MethodScriptParser.constant(direction), value != 0, value != 1 {
          throw fail(.argumentOutOfRange, args[4])
        }
        command = .peakDetect(
          source, count: count, indices: indices, heights: heights, direction: direction,
          minimumHeight: try positive(5, allowZero: true))
      case "battery_perc":
        try count(1...1)
        command = .batteryPercent(try target(0))
      case "loop":
        let condition = try condition(from: 0)
        open(.loop(condition))
      case "if":
        let condition = try condition(from: 0)
        open(.conditional(closed: [], open: condition, sawElse: false))
      case "elseif", "else":
        guard let block = state.blocks.last, case .conditional(var closed, let condition, let sawElse) = block.kind,
          !sawElse
        else { throw fail(.loopMismatch) }
        closed.append(MethodScript.Branch(condition: condition, body: block.body))
        let next: MethodScript.Condition?
        if name == "else" {
          try count(0...0)
          next = nil
        } else {
          next = try self.condition(from: 0)
        }
        state.blocks[state.blocks.count - 1].kind = .conditional(closed: closed, open: next, sawElse: name == "else")
        state.blocks[state.blocks.count - 1].body = []
      case "endif":
        try count(0...0)
        guard let block = state.blocks.last, case .conditional(var closed, let condition, _) = block.kind else {
          throw fail(.loopMismatch)
        }
        guard state.packageOpen == nil || state.blocks.count > state.packageDepth else {
          throw fail(.packageMismatch)
        }
        state.blocks.removeLast()
        closed.append(MethodScript.Branch(condition: condition, body: block.body))
        state.append(MethodScript.Statement(.conditional(closed), line: block.line))
      case "breakloop":
        try count(0...0)
        guard state.inAnyLoop else { throw fail(.loopMismatch) }
        command = .breakLoop
      case "send_string":
        try count(1...1)
        command = .sendString(try text(args[0]))
      case "set_pgstat_chan":
        try count(1...1)
        guard let channel = MethodScriptParser.constant(try argument(0)), channel == channel.rounded(),
          (0...1).contains(channel)
        else { throw fail(.argumentOutOfRange, args[0]) }
        command = .setChannel(Int(channel))
      case "set_pgstat_mode":
        try count(1...1)
        guard let mode = MethodScriptParser.constant(try argument(0)), mode == mode.rounded(), (0...6).contains(mode)
        else { throw fail(.argumentOutOfRange, args[0]) }
        command = .setMode(Int(mode))
      case "set_max_bandwidth":
        try count(1...1)
        command = .setMaxBandwidth(try positive(0))
      case "set_range_minmax":
        try count(3...3)
        let type = try variableType(0)
        let low = try argument(1)
        let high = try argument(2)
        command = type == "da" ? .setPotentialRange(low, high) : .noEffect(name)
      case "set_pot_range":
        try count(2...2)
        command = .setPotentialRange(try argument(0), try argument(1))
      case "set_range":
        try count(2...2)
        if try variableType(0) == "ba" {
          command = .setCurrentRange(try positive(1))
        } else {
          _ = try positive(1)
          command = .noEffect(name)
        }
      case "set_cr":
        try count(1...1)
        command = .setCurrentRange(try positive(0))
      case "set_autoranging":
        try count(2...3)
        if args.count == 2 {
          command = .setAutoranging(try positive(0, allowZero: true), try positive(1))
        } else if try variableType(0) == "ba" {
          command = .setAutoranging(try positive(1, allowZero: true), try positive(2))
        } else {
          _ = try positive(1)
          _ = try positive(2)
          command = .noEffect(name)
        }
      case "set_gpio_cfg":
        try count(2...2)
        let mask = try argument(0)
        if let mode = MethodScriptParser.constant(try argument(1)),
          GPIOPins.Mode(rawValue: Int(exactly: mode) ?? -1) == nil
        {
          throw fail(.argumentOutOfRange, args[1])
        }
        command = .gpioConfigure(mask, mode: try argument(1))
      case "set_gpio":
        try count(1...1)
        command = .gpioSet(try argument(0))
      case "set_gpio_msk":
        try count(2...2)
        command = .gpioSetMasked(try argument(0), level: try argument(1))
      case "set_gpio_pullup":
        try count(2...2)
        command = .gpioPullUp(try argument(0), enable: try argument(1))
      case "get_gpio":
        try count(1...1)
        command = .gpioGet(try target(0))
      case "hibernate":
        try count(2...2)
        let sources = try argument(0)
        if let mask = MethodScriptParser.constant(sources), !(1...7).contains(mask) || mask != mask.rounded() {
          throw fail(.argumentOutOfRange, args[0])
        }
        command = .hibernate(sources, seconds: try positive(1, allowZero: true))
      case "rtc_set":
        try count(6...6)
        command = .rtcSet(try (0..<6).map { index throws(MethodScriptError) in try argument(index) })
      case "rtc_get":
        try count(6...6)
        var targets: [MethodScript.Argument] = []
        for index in 0..<6 { targets.append(try target(index)) }
        command = .rtcGet(targets)
      case "mux_config":
        try count(2...2)
        command = .multiplexerConfigure(try argument(0), flags: try argument(1))
      case "mux_set_channel":
        try count(1...1)
        command = .multiplexerSelect(try argument(0))
      case "mux_get_channel_count":
        try count(1...1)
        command = .multiplexerChannelCount(try target(0))
      case "set_int":
        try count(1...1)
        command = .setInterval(try positive(0))
      case "await_int":
        try count(0...0)
        command = .awaitInterval
      case "set_e":
        try count(1...1)
        command = .setPotential(try argument(0))
      case "set_i":
        try count(1...1)
        command = .setCurrent(try argument(0))
      case "cell_on":
        try count(0...0)
        command = .cellOn
      case "cell_off":
        try count(0...0)
        command = .cellOff
      case "wait":
        try count(1...1)
        command = .wait(try positive(0, allowZero: true))
      case "timer_start":
        try count(0...0)
        command = .timerStart
      case "timer_get":
        try count(1...1)
        command = .timerGet(try target(0))
      case "meas":
        try count(2...3)
        let interval = args.count == 3 ? try positive(0) : nil
        let typeIndex = args.count - 1
        let type = try variableType(typeIndex)
        guard MethodScriptInterpreter.measurableTypes.contains(type) else {
          throw fail(.invalidArgument, args[typeIndex])
        }
        command = .measure(try target(typeIndex - 1), type, interval: interval)
      case "pck_start":
        try count(0...1)
        guard state.packageOpen == nil else { throw fail(.packageMismatch) }
        state.packageOpen = number
        state.packageDepth = state.blocks.count
        command = .packageStart
      case "pck_add":
        try count(1...1)
        guard state.packageOpen != nil else { throw fail(.packageMismatch) }
        command = .packageAdd(try reference(args[0]))
      case "pck_end":
        try count(0...0)
        guard state.packageOpen != nil else { throw fail(.packageMismatch) }
        state.packageOpen = nil
        command = .packageEnd
      case "meas_loop_lsv", "meas_loop_cv", "meas_loop_ca", "meas_loop_eis":
        guard !state.inMeasurementLoop else { throw fail(.loopMismatch) }
        open(.measurement(try classicLoop(name)))
      case _ where MethodScript.Technique.Kind(rawValue: name) != nil:
        guard !state.inMeasurementLoop else { throw fail(.loopMismatch) }
        let kind = MethodScript.Technique.Kind(rawValue: name)!
        let total = kind.outputCount + kind.parameterCount
        try count(total...total)
        var outputs: [String] = []
        for index in 0..<kind.outputCount { outputs.append(try newName(index)) }
        var parameters: [MethodScript.Argument] = []
        for index in kind.outputCount..<total { parameters.append(try argument(index)) }
        open(.measurement(.technique(MethodScript.Technique(kind: kind, outputs: outputs, parameters: parameters))))
      case "endloop":
        try count(0...0)
        guard let block = state.blocks.last else { throw fail(.loopMismatch) }
        guard state.packageOpen == nil || state.blocks.count > state.packageDepth else {
          throw fail(.packageMismatch)
        }
        let closed: MethodScript.Command
        switch block.kind {
        case .conditional: throw fail(.loopMismatch)
        case .loop(let condition): closed = .loop(condition, body: block.body)
        case .measurement(.lsv(let sweep)): closed = .linearSweep(sweep, body: block.body)
        case .measurement(.cv(let sweep)): closed = .cyclicSweep(sweep, body: block.body)
        case .measurement(.ca(let ca)): closed = .chronoamperometry(ca, body: block.body)
        case .measurement(.eis(let eis)): closed = .impedance(eis, body: block.body)
        case .measurement(.technique(let technique)): closed = .technique(technique, body: block.body)
        }
        state.blocks.removeLast()
        state.append(MethodScript.Statement(closed, line: block.line))
      default:
        guard MethodScriptParser.noEffectCommands.contains(name) else { throw fail(.unknownScriptCommand) }
        for index in args.indices where MethodScriptParser.literal(args[index].text) == nil {
          _ = try reference(args[index])
        }
        command = .noEffect(name)
      }
      if let command { state.append(MethodScript.Statement(command, line: number)) }
    }

    mutating func classicLoop(_ name: String) throws(MethodScriptError) -> LoopKind {
      switch name {
      case "meas_loop_lsv":
        try count(6...6)
        return .lsv(
          MethodScript.Sweep(
            potential: try newName(0), current: try newName(1), begin: try argument(2), end: try argument(3),
            step: try positive(4), rate: try positive(5)))
      case "meas_loop_cv":
        try count(7...8)
        var scans = 1
        if args.count == 8 {
          guard let parsed = MethodScriptParser.scans(args[7].text) else { throw fail(.invalidArgument, args[7]) }
          guard parsed >= 1 else { throw fail(.argumentOutOfRange, args[7]) }
          scans = parsed
        }
        return .cv(
          MethodScript.CyclicSweep(
            potential: try newName(0), current: try newName(1), begin: try argument(2), vertex1: try argument(3),
            vertex2: try argument(4), step: try positive(5), rate: try positive(6), scans: scans))
      case "meas_loop_ca":
        try count(5...5)
        return .ca(
          MethodScript.Chronoamperometry(
            potential: try newName(0), current: try newName(1), dc: try argument(2), interval: try positive(3),
            duration: try positive(4, allowZero: true)))
      default:
        try count(8...8)
        return .eis(
          MethodScript.ImpedanceSweep(
            frequency: try newName(0), zReal: try newName(1), zImaginary: try newName(2), amplitude: try positive(3),
            startFrequency: try positive(4), endFrequency: try positive(5), count: try positive(6),
            dc: try argument(7)))
      }
    }
  }

  /// Splits a line into tokens at spaces and tabs; `#` outside a string
  /// starts a comment; `"…"` and `f"…"` are one token with their spaces.
  static func tokens(of text: Substring, line: Int) throws(MethodScriptError) -> [Token] {
    var result: [Token] = []
    var start: Substring.Index?
    var startColumn = 1
    var inString = false
    var column = 1
    var end = text.endIndex
    for index in text.indices {
      let character = text[index]
      if inString {
        if character == "\"" { inString = false }
      } else if character == "#" {
        end = index
        break
      } else if character == " " || character == "\t" {
        if let begin = start {
          result.append(Token(text: text[begin..<index], column: startColumn))
          start = nil
        }
      } else {
        if start == nil {
          start = index
          startColumn = column
        }
        if character == "\"" { inString = true }
      }
      column += 1
    }
    if inString { throw MethodScriptError(.invalidArgument, line: line, column: startColumn) }
    if let begin = start { result.append(Token(text: text[begin..<end], column: startColumn)) }
    return result
  }

  /// A variable name: a letter, then letters, digits or `_`.
  static func isName(_ text: Substring) -> Bool {
    guard let first = text.utf8.first, isLetter(first) else { return false }
    return text.utf8.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
  }

  private static func isLetter(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) }

  /// `nscans(N)`.
  private static func scans(_ text: Substring) -> Int? {
    guard text.hasPrefix("nscans("), text.hasSuffix(")") else { return nil }
    return Int(text.dropFirst(7).dropLast())
  }

  /// The value of a literal argument; `nil` for a variable.
  static func constant(_ argument: MethodScript.Argument) -> Double? {
    switch argument {
    case .literal(let value): value
    case .integer(let value): Double(value)
    case .variable, .element: nil
    }
  }

  /// A literal's value (see `literal(_:)`).
  static func number(_ text: Substring) -> Double? {
    literal(text).flatMap(constant)
  }

  /// A literal: optional sign, then decimal digits with an optional point and
  /// an optional SI prefix character (`a f p n u m k M G T P E`), or `i` for an
  /// integer; or an integer in hex (`0x3FF`) or binary (`0b101`), with an
  /// optional `i`.
  static func literal(_ text: Substring) -> MethodScript.Argument? {
    var body = text
    var sign = 1
    if body.first == "-" || body.first == "+" {
      if body.first == "-" { sign = -1 }
      body = body.dropFirst()
    }
    for (prefix, radix) in [("0x", 16), ("0b", 2)] where body.hasPrefix(prefix) {
      var digits = body.dropFirst(2)
      if digits.last == "i" { digits = digits.dropLast() }
      guard !digits.isEmpty, digits.count <= 32, let value = Int(digits, radix: radix), value <= 0xFFFF_FFFF else {
        return nil
      }
      return .integer(sign * value)
    }
    var factor = 1.0
    var integer = false
    if let last = body.last, !last.isNumber, last != "." {
      if last == "i" {
        integer = true
      } else {
        guard let prefix = SIPrefix(rawValue: last), prefix != .none else { return nil }
        factor = prefix.factor
      }
      body = body.dropLast()
    }
    guard !body.isEmpty, body.count <= 40, body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
      body.filter({ $0 == "." }).count <= 1, body != "."
    else { return nil }
    if integer {
      guard let value = Int(body), value <= 0xFFFF_FFFF else { return nil }
      return .integer(sign * value)
    }
    guard let value = Double(body) else { return nil }
    return .literal(Double(sign) * value * factor)
  }
}
