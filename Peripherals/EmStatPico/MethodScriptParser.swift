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

  public init() {}

  /// Commands accepted without effect (settings that do not change the simulation).
  static let noEffectCommands: Set<String> = [
    "set_acquisition_frac", "set_acquisition_frac_autoadjust", "set_gpio_cfg", "set_gpio", "set_gpio_pullup",
    "set_ir_comp", "set_poly_we_mode",
  ]

  private struct Token {
    var text: Substring
    var column: Int
  }

  private enum LoopKind {
    case lsv(MethodScript.Sweep)
    case cv(MethodScript.CyclicSweep)
    case ca(MethodScript.Chronoamperometry)
    case eis(MethodScript.ImpedanceSweep)
  }

  private struct OpenLoop {
    var kind: LoopKind
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

  private func parseLines(_ lines: [String]) throws(MethodScriptError) -> MethodScript {
    guard lines.count <= maximumLines else {
      throw MethodScriptError(.scriptTooLong, line: maximumLines + 1, column: 1)
    }
    var main: [MethodScript.Statement] = []
    var finished: [MethodScript.Statement] = []
    var inFinished = false
    var loops: [OpenLoop] = []
    var packageOpen: Int?
    var declared: Set<String> = []

    for (offset, raw) in lines.enumerated() {
      let number = offset + 1
      var text = Substring(raw)
      if text.last == "\r" { text = text.dropLast() }
      guard text.count <= maximumLineLength else {
        throw MethodScriptError(.lineTooLong, line: number, column: maximumLineLength + 1)
      }
      if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
      let tokens = Self.tokens(of: text)
      guard let head = tokens.first else { continue }
      let args = Array(tokens.dropFirst())
      func fail(_ code: MethodScriptError.Code, _ token: Token? = nil) -> MethodScriptError {
        MethodScriptError(code, line: number, column: (token ?? head).column)
      }
      func count(_ range: ClosedRange<Int>) throws(MethodScriptError) {
        guard range.contains(args.count) else {
          throw fail(.wrongArgumentCount, args.count > range.upperBound ? args[range.upperBound] : head)
        }
      }
      func argument(_ index: Int) throws(MethodScriptError) -> MethodScript.Argument {
        let token = args[index]
        if let value = Self.number(token.text) { return .literal(value) }
        guard Self.isName(token.text) else { throw fail(.invalidArgument, token) }
        guard declared.contains(String(token.text)) else { throw fail(.undeclaredVariable, token) }
        return .variable(String(token.text))
      }
      func positive(_ index: Int, allowZero: Bool = false) throws(MethodScriptError) -> MethodScript.Argument {
        let value = try argument(index)
        if case .literal(let number) = value, number < 0 || (!allowZero && number == 0) {
          throw fail(.argumentOutOfRange, args[index])
        }
        return value
      }
      func newName(_ index: Int) throws(MethodScriptError) -> String {
        let token = args[index]
        guard Self.isName(token.text) else { throw fail(.invalidArgument, token) }
        declared.insert(String(token.text))
        return String(token.text)
      }
      func existingName(_ index: Int) throws(MethodScriptError) -> String {
        let token = args[index]
        guard Self.isName(token.text) else { throw fail(.invalidArgument, token) }
        guard declared.contains(String(token.text)) else { throw fail(.undeclaredVariable, token) }
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
      func currentLimit(_ index: Int) throws(MethodScriptError) -> MethodScript.Argument {
        let value = try positive(index)
        if case .literal(let amps) = value, amps > 5e-3 * 1.0001 { throw fail(.argumentOutOfRange, args[index]) }
        return value
      }

      let name = String(head.text)
      var command: MethodScript.Command?
      switch name {
      case "on_finished:":
        try count(0...0)
        guard loops.isEmpty else { throw fail(.loopMismatch) }
        guard packageOpen == nil else { throw fail(.packageMismatch) }
        guard !inFinished else { throw fail(.invalidArgument) }
        inFinished = true
      case "var":
        try count(1...1)
        command = .declare(try newName(0))
      case "store_var":
        try count(3...3)
        let value = try argument(1)
        let type = try variableType(2)
        command = .store(try newName(0), value, type)
      case "add_var", "sub_var", "mul_var", "div_var", "copy_var":
        try count(2...2)
        let target = try existingName(0)
        command = .arithmetic(MethodScript.Arithmetic(rawValue: name)!, target, try argument(1))
      case "set_pgstat_chan":
        try count(1...1)
        guard case .literal(let channel) = try argument(0), channel == channel.rounded(), (0...1).contains(channel)
        else { throw fail(.argumentOutOfRange, args[0]) }
        command = .setChannel(Int(channel))
      case "set_pgstat_mode":
        try count(1...1)
        guard case .literal(let mode) = try argument(0), mode == mode.rounded(), (0...4).contains(mode) else {
          throw fail(.argumentOutOfRange, args[0])
        }
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
        let type = try variableType(0)
        if type == "ba" {
          command = .setCurrentRange(try currentLimit(1))
        } else {
          _ = try argument(1)
          command = .noEffect(name)
        }
      case "set_cr":
        try count(1...1)
        command = .setCurrentRange(try currentLimit(0))
      case "set_autoranging":
        try count(2...3)
        if args.count == 2 {
          command = .setAutoranging(try currentLimit(0), try currentLimit(1))
        } else if try variableType(0) == "ba" {
          command = .setAutoranging(try currentLimit(1), try currentLimit(2))
        } else {
          _ = try argument(1)
          _ = try argument(2)
          command = .noEffect(name)
        }
      case "set_e":
        try count(1...1)
        command = .setPotential(try argument(0))
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
        command = .timerGet(try newName(0))
      case "meas":
        try count(2...2)
        let type = try variableType(1)
        guard type == "ba" || type == "ab" else { throw fail(.invalidArgument, args[1]) }
        command = .measure(try newName(0), type)
      case "pck_start":
        try count(0...1)
        guard packageOpen == nil else { throw fail(.packageMismatch) }
        packageOpen = number
        command = .packageStart
      case "pck_add":
        try count(1...1)
        guard packageOpen != nil else { throw fail(.packageMismatch) }
        command = .packageAdd(try existingName(0))
      case "pck_end":
        try count(0...0)
        guard packageOpen != nil else { throw fail(.packageMismatch) }
        packageOpen = nil
        command = .packageEnd
      case "meas_loop_lsv", "meas_loop_cv", "meas_loop_ca", "meas_loop_eis":
        guard loops.isEmpty else { throw fail(.loopMismatch) }
        let kind: LoopKind
        switch name {
        case "meas_loop_lsv":
          try count(6...6)
          let sweep = MethodScript.Sweep(
            potential: try newName(0), current: try newName(1), begin: try argument(2), end: try argument(3),
            step: try positive(4), rate: try positive(5))
          kind = .lsv(sweep)
        case "meas_loop_cv":
          try count(7...8)
          var scans = 1
          if args.count == 8 {
            guard let parsed = Self.scans(args[7].text) else { throw fail(.invalidArgument, args[7]) }
            guard parsed >= 1 else { throw fail(.argumentOutOfRange, args[7]) }
            scans = parsed
          }
          let sweep = MethodScript.CyclicSweep(
            potential: try newName(0), current: try newName(1), begin: try argument(2), vertex1: try argument(3),
            vertex2: try argument(4), step: try positive(5), rate: try positive(6), scans: scans)
          kind = .cv(sweep)
        case "meas_loop_ca":
          try count(5...5)
          let ca = MethodScript.Chronoamperometry(
            potential: try newName(0), current: try newName(1), dc: try argument(2), interval: try positive(3),
            duration: try positive(4, allowZero: true))
          kind = .ca(ca)
        default:
          try count(8...8)
          let eis = MethodScript.ImpedanceSweep(
            frequency: try newName(0), zReal: try newName(1), zImaginary: try newName(2), amplitude: try positive(3),
            startFrequency: try positive(4), endFrequency: try positive(5), count: try positive(6),
            dc: try argument(7))
          kind = .eis(eis)
        }
        loops.append(OpenLoop(kind: kind, line: number))
        continue
      case "endloop":
        try count(0...0)
        guard let loop = loops.popLast() else { throw fail(.loopMismatch) }
        guard packageOpen == nil else { throw fail(.packageMismatch) }
        switch loop.kind {
        case .lsv(let sweep): command = .linearSweep(sweep, body: loop.body)
        case .cv(let sweep): command = .cyclicSweep(sweep, body: loop.body)
        case .ca(let ca): command = .chronoamperometry(ca, body: loop.body)
        case .eis(let eis): command = .impedance(eis, body: loop.body)
        }
        let statement = MethodScript.Statement(command!, line: loop.line)
        if inFinished { finished.append(statement) } else { main.append(statement) }
        continue
      default:
        guard Self.noEffectCommands.contains(name) else { throw fail(.unknownScriptCommand) }
        for index in args.indices where Self.number(args[index].text) == nil && !Self.isName(args[index].text) {
          throw fail(.invalidArgument, args[index])
        }
        command = .noEffect(name)
      }
      guard let command else { continue }
      let statement = MethodScript.Statement(command, line: number)
      if !loops.isEmpty {
        loops[loops.count - 1].body.append(statement)
      } else if inFinished {
        finished.append(statement)
      } else {
        main.append(statement)
      }
    }
    if let loop = loops.last { throw MethodScriptError(.loopMismatch, line: loop.line, column: 1) }
    if let line = packageOpen { throw MethodScriptError(.packageMismatch, line: line, column: 1) }
    return MethodScript(statements: main, onFinished: finished)
  }

  private static func tokens(of text: Substring) -> [Token] {
    var result: [Token] = []
    var start: Substring.Index?
    var column = 1
    var startColumn = 1
    for index in text.indices {
      let isSpace = text[index] == " " || text[index] == "\t"
      if isSpace, let begin = start {
        result.append(Token(text: text[begin..<index], column: startColumn))
        start = nil
      } else if !isSpace, start == nil {
        start = index
        startColumn = column
      }
      column += 1
    }
    if let begin = start { result.append(Token(text: text[begin...], column: startColumn)) }
    return result
  }

  /// A variable name: a lowercase letter, then lowercase letters, digits or `_`.
  static func isName(_ text: Substring) -> Bool {
    guard let first = text.utf8.first, (0x61...0x7A).contains(first), text.utf8.count <= 16 else { return false }
    return text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
  }

  /// `nscans(N)`.
  private static func scans(_ text: Substring) -> Int? {
    guard text.hasPrefix("nscans("), text.hasSuffix(")") else { return nil }
    return Int(text.dropFirst(7).dropLast())
  }

  /// A literal: optional sign, decimal digits with an optional point, and an
  /// optional SI prefix character (`a f p n u m k M G T P E`) or `i` (integer).
  /// Hex (`0x1F`) is accepted too.
  static func number(_ text: Substring) -> Double? {
    var body = text
    var sign = 1.0
    if body.first == "-" || body.first == "+" {
      if body.first == "-" { sign = -1 }
      body = body.dropFirst()
    }
    if body.hasPrefix("0x"), body.count > 2, let hex = Int(body.dropFirst(2), radix: 16) {
      return sign * Double(hex)
    }
    var factor = 1.0
    if let last = body.last, !last.isNumber, last != "." {
      guard let prefix = SIPrefix(rawValue: last), prefix != .none else { return nil }
      factor = prefix.factor
      body = body.dropLast()
    }
    guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
      body.filter({ $0 == "." }).count <= 1, body != "."
    else { return nil }
    guard let value = Double(body) else { return nil }
    return sign * value * factor
  }
}
