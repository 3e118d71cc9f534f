/// A parsed MethodSCRIPT: the statements of its main part and of its
/// `on_finished:` part, which runs when the main part ends or is aborted.
///
/// The firmware parses a whole script before it runs any of it, so a script
/// with an error anywhere produces no measurement output; `MethodScriptParser`
/// does the same.
public struct MethodScript: Hashable, Sendable {
  /// The main part.
  public var statements: [Statement]
  /// The part after `on_finished:`.
  public var onFinished: [Statement]

  public init(statements: [Statement], onFinished: [Statement] = []) {
    self.statements = statements
    self.onFinished = onFinished
  }

  /// A command with the script line it came from (1 = first line after `e`).
  public struct Statement: Hashable, Sendable {
    public var command: Command
    public var line: Int

    public init(_ command: Command, line: Int) {
      self.command = command
      self.line = line
    }
  }

  /// A value in a script: a literal, a variable, or an element of an array.
  public indirect enum Argument: Hashable, Sendable {
    /// A real literal, SI prefix applied (`-500m`).
    case literal(Double)
    /// An integer literal (`11i`, `0x3FFi`, `0b101`).
    case integer(Int)
    /// A variable's value.
    case variable(String)
    /// `name[index]`: an element of an array.
    case element(String, index: Argument)
  }

  /// Binary arithmetic and bit operations on a variable: `add_var x y` makes x = x + y.
  public enum Arithmetic: String, Hashable, Sendable, CaseIterable {
    case add = "add_var"
    case subtract = "sub_var"
    case multiply = "mul_var"
    case divide = "div_var"
    case power = "pow_var"
    case bitAnd = "bit_and_var"
    case bitOr = "bit_or_var"
    case bitXor = "bit_xor_var"
    case shiftLeft = "bit_lsl_var"
    case shiftRight = "bit_lsr_var"
  }

  /// Operations on one variable, in place.
  public enum UnaryOperation: String, Hashable, Sendable, CaseIterable {
    case bitInvert = "bit_inv_var"
    case integerToFloat = "int_to_float"
    case floatToInteger = "float_to_int"
    case naturalLog = "log_var"
  }

  /// How two values compare in `loop` and `if`.
  public enum Comparison: String, Hashable, Sendable, CaseIterable {
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case equal = "=="
    case notEqual = "!="

    func holds(_ lhs: Double, _ rhs: Double) -> Bool {
      switch self {
      case .less: lhs < rhs
      case .lessOrEqual: lhs <= rhs
      case .greater: lhs > rhs
      case .greaterOrEqual: lhs >= rhs
      case .equal: lhs == rhs
      case .notEqual: lhs != rhs
      }
    }
  }

  /// `lhs op rhs`, the condition of `loop`, `if` and `elseif`.
  public struct Condition: Hashable, Sendable {
    public var lhs: Argument
    public var comparison: Comparison
    public var rhs: Argument
  }

  /// One `if`/`elseif` (with a condition) or `else` (without) and its statements.
  public struct Branch: Hashable, Sendable {
    public var condition: Condition?
    public var body: [Statement]
  }

  /// A piece of a `send_string` text: literal text, or `{name}` in an `f"…"` string.
  public enum TextPart: Hashable, Sendable {
    case text(String)
    case value(Argument)
  }

  /// A potential sweep: `meas_loop_lsv E I Ebegin Eend Estep rate`.
  public struct Sweep: Hashable, Sendable {
    public var potential: String
    public var current: String
    public var begin: Argument
    public var end: Argument
    public var step: Argument
    public var rate: Argument
  }

  /// `meas_loop_cv E I Ebegin Evertex1 Evertex2 Estep rate [nscans(N)]`.
  public struct CyclicSweep: Hashable, Sendable {
    public var potential: String
    public var current: String
    public var begin: Argument
    public var vertex1: Argument
    public var vertex2: Argument
    public var step: Argument
    public var rate: Argument
    public var scans: Int
  }

  /// `meas_loop_ca E I Edc tInterval tRun`.
  public struct Chronoamperometry: Hashable, Sendable {
    public var potential: String
    public var current: String
    public var dc: Argument
    public var interval: Argument
    public var duration: Argument
  }

  /// `meas_loop_eis f Zre Zim Eac fStart fEnd nFrequencies Edc`.
  public struct ImpedanceSweep: Hashable, Sendable {
    public var frequency: String
    public var zReal: String
    public var zImaginary: String
    public var amplitude: Argument
    public var startFrequency: Argument
    public var endFrequency: Argument
    public var count: Argument
    public var dc: Argument
  }

  /// The other measurement loops: the variables each point writes and the
  /// parameters, both in the order PalmSens' example scripts give them.
  public struct Technique: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
      /// `E I Ebegin Eend Estep Epulse tPulse rate`
      case differentialPulse = "meas_loop_dpv"
      /// `E I Iforward Ireverse Ebegin Eend Estep Eamplitude frequency`
      case squareWave = "meas_loop_swv"
      /// `E I Ebegin Eend Estep tPulse rate`
      case normalPulse = "meas_loop_npv"
      /// `Edc Idc Eac Iac Zre Zim Ebegin Eend Estep rate Eamplitude frequency`
      case alternatingCurrent = "meas_loop_acv"
      /// `E I Ibegin Iend Istep rate` (galvanostatic)
      case linearSweepPotentiometry = "meas_loop_lsp"
      /// `E I Idc tInterval tRun` (galvanostatic)
      case chronopotentiometry = "meas_loop_cp"
      /// `E I Edc Epulse tPulse tInterval tRun mode`
      case pulsedAmperometric = "meas_loop_pad"
      /// `E tInterval tRun`
      case openCircuit = "meas_loop_ocp"
      /// `f Zre Zim Iac fStart fEnd nFrequencies Idc`
      case galvanostaticImpedance = "meas_loop_geis"

      /// How many variables a point writes.
      public var outputCount: Int {
        switch self {
        case .squareWave: 4
        case .alternatingCurrent: 6
        case .openCircuit: 1
        case .galvanostaticImpedance: 3
        default: 2
        }
      }

      /// How many parameters follow the variables.
      public var parameterCount: Int {
        switch self {
        case .differentialPulse: 6
        case .squareWave: 5
        case .normalPulse: 5
        case .alternatingCurrent: 6
        case .linearSweepPotentiometry: 4
        case .chronopotentiometry: 3
        case .pulsedAmperometric: 6
        case .openCircuit: 2
        case .galvanostaticImpedance: 5
        }
      }
    }

    public var kind: Kind
    /// The variables each point writes.
    public var outputs: [String]
    /// The parameters.
    public var parameters: [Argument]
  }

  /// One script command.
  public indirect enum Command: Hashable, Sendable {
    /// `var x`
    case declare(String)
    /// `array x n`
    case declareArray(String, size: Argument)
    /// `store_var x value type` (x may be an array element).
    case store(Argument, Argument, String)
    /// `add_var x y` and the other binary operations: x = x op y.
    case arithmetic(Arithmetic, Argument, Argument)
    /// `copy_var source target`
    case copy(Argument, to: Argument)
    /// `bit_inv_var x`, `float_to_int x` and the other operations in place.
    case unary(UnaryOperation, Argument)
    /// `array_set array index value`
    case arraySet(String, index: Argument, value: Argument)
    /// `array_get array index target`
    case arrayGet(String, index: Argument, target: Argument)
    /// `mean array target`: the mean of the array's elements.
    case mean(String, target: Argument)
    /// `alter_vartype x type`
    case alterType(Argument, String)
    /// `smooth source [count] target strength`: Savitzky–Golay smoothing of
    /// the first `count` elements of `source` (all of them without `count`)
    /// into `target`.
    case smooth(String, count: Argument?, target: String, strength: Argument)
    /// `linear_fit x y slope intercept`: the least-squares line through the
    /// arrays' points.
    case linearFit(String, String, slope: Argument, intercept: Argument)
    /// `peak_detect array count indices heights direction minHeight`: the
    /// peaks among the first `count` elements, highest first (direction 0
    /// maxima, 1 minima), at least `minHeight` above their base.
    case peakDetect(
      String, count: Argument, indices: String, heights: String, direction: Argument, minimumHeight: Argument)
    /// `battery_perc x`: the battery's charge in percent, or −1 when unavailable.
    case batteryPercent(Argument)
    /// `loop condition … endloop`
    case loop(Condition, body: [Statement])
    /// `if … elseif … else … endif`
    case conditional([Branch])
    /// `breakloop`: leaves the innermost loop (also a measurement loop).
    case breakLoop
    /// `send_string "text"` or `send_string f"text {x}"`: a line `T` + text.
    case sendString([TextPart])
    /// `set_pgstat_chan n`
    case setChannel(Int)
    /// `set_pgstat_mode n` (2 low speed, 3 high speed, 6 galvanostatic).
    case setMode(Int)
    /// `set_max_bandwidth f`
    case setMaxBandwidth(Argument)
    /// `set_range_minmax da min max`, `set_pot_range min max`.
    case setPotentialRange(Argument, Argument)
    /// `set_range ba I`, `set_cr I`.
    case setCurrentRange(Argument)
    /// `set_autoranging ba min max`, `set_autoranging min max`.
    case setAutoranging(Argument, Argument)
    /// A command the emulation accepts without effect: a range or autoranging
    /// command for a type that is not a current (e.g. `set_range ab 4`), GPIO
    /// and acquisition settings.
    case noEffect(String)
    /// `set_gpio_cfg mask mode` (0 input, 1 output, 2 peripheral).
    case gpioConfigure(Argument, mode: Argument)
    /// `set_gpio value`
    case gpioSet(Argument)
    /// `set_gpio_msk mask level`: the masked outputs high (level ≠ 0) or low.
    case gpioSetMasked(Argument, level: Argument)
    /// `set_gpio_pullup mask enable`
    case gpioPullUp(Argument, enable: Argument)
    /// `get_gpio x`: every pin's level into x.
    case gpioGet(Argument)
    /// `hibernate sources seconds`: sleep without output until a source in
    /// the mask fires (0x01 communication, 0x02 WAKE pin, 0x04 the timer).
    case hibernate(Argument, seconds: Argument)
    /// `rtc_set year month day hour minute second`
    case rtcSet([Argument])
    /// `rtc_get year month day hour minute second` (six targets).
    case rtcGet([Argument])
    /// `mux_config type flags` (1 MUX8, 2 MUX16, 3 MUX8-R2, 4 the Pico's MUX16).
    case multiplexerConfigure(Argument, flags: Argument)
    /// `mux_set_channel n`: the multiplexer connects channel n (1 is the first).
    case multiplexerSelect(Argument)
    /// `mux_get_channel_count x`
    case multiplexerChannelCount(Argument)
    /// `set_int t`: starts an interval timer of period t.
    case setInterval(Argument)
    /// `await_int`: waits for the interval timer's next period end.
    case awaitInterval
    /// `set_e E`
    case setPotential(Argument)
    /// `set_i I` (galvanostatic mode)
    case setCurrent(Argument)
    /// `cell_on`
    case cellOn
    /// `cell_off`
    case cellOff
    /// `wait t` (seconds)
    case wait(Argument)
    /// `timer_start`
    case timerStart
    /// `timer_get x`
    case timerGet(Argument)
    /// `meas [interval] x type`: one measurement (`ba` WE current, `ab` WE
    /// potential, `ef` board temperature) into x, over `interval` seconds.
    case measure(Argument, String, interval: Argument?)
    /// `pck_start`
    case packageStart
    /// `pck_add x`
    case packageAdd(Argument)
    /// `pck_end`
    case packageEnd
    /// `meas_loop_lsv … endloop`
    case linearSweep(Sweep, body: [Statement])
    /// `meas_loop_cv … endloop`
    case cyclicSweep(CyclicSweep, body: [Statement])
    /// `meas_loop_ca … endloop`
    case chronoamperometry(Chronoamperometry, body: [Statement])
    /// `meas_loop_eis … endloop`
    case impedance(ImpedanceSweep, body: [Statement])
    /// The other `meas_loop_… endloop`s.
    case technique(Technique, body: [Statement])
  }
}
