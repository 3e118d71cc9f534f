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

  /// A numeric argument: a literal (SI prefix applied) or a variable's value.
  public enum Argument: Hashable, Sendable {
    case literal(Double)
    case variable(String)
  }

  /// What `add_var` and its siblings do to their first variable.
  public enum Arithmetic: String, Hashable, Sendable {
    case add = "add_var"
    case subtract = "sub_var"
    case multiply = "mul_var"
    case divide = "div_var"
    case copy = "copy_var"
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

  /// One script command.
  public indirect enum Command: Hashable, Sendable {
    /// `var x`
    case declare(String)
    /// `store_var x value type`
    case store(String, Argument, String)
    /// `add_var x y` and the like.
    case arithmetic(Arithmetic, String, Argument)
    /// `set_pgstat_chan n`
    case setChannel(Int)
    /// `set_pgstat_mode n` (2 low speed, 3 high speed).
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
    /// `set_e E`
    case setPotential(Argument)
    /// `cell_on`
    case cellOn
    /// `cell_off`
    case cellOff
    /// `wait t` (seconds)
    case wait(Argument)
    /// `timer_start`
    case timerStart
    /// `timer_get x`
    case timerGet(String)
    /// `meas x type`: one measurement of a WE current (`ba`) or potential (`ab`) into x.
    case measure(String, String)
    /// `pck_start`
    case packageStart
    /// `pck_add x`
    case packageAdd(String)
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
  }
}
