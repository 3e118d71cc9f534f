import Foundation

/// A session exported from E4 Connect (Empatica's web portal): one CSV file
/// per signal, read into regularly sampled series a device can replay.
///
/// The files, as E4 Connect writes them:
/// - `BVP.csv` (64 Hz), `EDA.csv` (µS, 4 Hz), `TEMP.csv` (°C, 4 Hz),
///   `HR.csv` (bpm, 1 Hz): row 1 the start time in Unix seconds, row 2 the
///   sample rate in Hz, then one sample per row.
/// - `ACC.csv`: the same with three columns (x, y, z) in 1/64 g; this reader
///   converts them to g.
/// - `IBI.csv`: row 1 the start time and `IBI`, then rows of
///   (seconds from the start, interbeat interval in seconds).
/// - `tags.csv`: one Unix time per row (button presses).
///
/// Every file is optional; an empty file counts as absent (E4 Connect writes
/// an empty `IBI.csv` when it found no beats). Bad input throws an
/// `E4ConnectExportError` naming the file, line and column.
public struct E4ConnectExport: Hashable, Sendable {
  /// A regularly sampled signal from one column of an export file.
  public struct Series: Hashable, Sendable {
    /// Unix time (seconds) of the first sample.
    public var startTime: Double
    /// Samples per second.
    public var sampleRate: Double
    public var values: [Double]

    public init(startTime: Double, sampleRate: Double, values: [Double]) {
      self.startTime = startTime
      self.sampleRate = sampleRate
      self.values = values
    }

    /// Seconds the series covers.
    public var duration: Double { Double(values.count) / sampleRate }

    /// The series as a signal whose time zero is Unix time `origin` (its own
    /// start when `nil`), so several series of one export stay aligned:
    /// sample n at `startTime − origin + n / sampleRate`.
    public func recordedSignal(
      from origin: Double? = nil, interpolation: RecordedSignal.Interpolation = .hold, loops: Bool = false
    ) -> RecordedSignal {
      let offset = startTime - (origin ?? startTime)
      return RecordedSignal(
        times: values.indices.map { offset + Double($0) / sampleRate }, values: values,
        interpolation: interpolation, loops: loops)
    }
  }

  /// The interbeat intervals E4 Connect computed.
  public struct InterbeatIntervals: Hashable, Sendable {
    /// One detected beat: seconds from `startTime`, and the interval to the beat before it.
    public struct Beat: Hashable, Sendable {
      public var offset: Double
      public var interval: Double

      public init(offset: Double, interval: Double) {
        self.offset = offset
        self.interval = interval
      }
    }

    /// Unix time (seconds) the offsets count from.
    public var startTime: Double
    public var beats: [Beat]

    public init(startTime: Double, beats: [Beat]) {
      self.startTime = startTime
      self.beats = beats
    }
  }

  /// The file names an export holds.
  public static let fileNames = ["ACC.csv", "BVP.csv", "EDA.csv", "TEMP.csv", "HR.csv", "IBI.csv", "tags.csv"]

  public var bvp: Series?
  /// Electrodermal activity, µS.
  public var eda: Series?
  /// Skin temperature, °C.
  public var temperature: Series?
  /// Heart rate, beats per minute.
  public var heartRate: Series?
  /// Acceleration along x, in g.
  public var accelerationX: Series?
  /// Acceleration along y, in g.
  public var accelerationY: Series?
  /// Acceleration along z, in g.
  public var accelerationZ: Series?
  public var interbeatIntervals: InterbeatIntervals?
  /// Button presses, Unix seconds.
  public var tags: [Double] = []

  public init(
    bvp: Series? = nil, eda: Series? = nil, temperature: Series? = nil, heartRate: Series? = nil,
    accelerationX: Series? = nil, accelerationY: Series? = nil, accelerationZ: Series? = nil,
    interbeatIntervals: InterbeatIntervals? = nil, tags: [Double] = []
  ) {
    self.bvp = bvp
    self.eda = eda
    self.temperature = temperature
    self.heartRate = heartRate
    self.accelerationX = accelerationX
    self.accelerationY = accelerationY
    self.accelerationZ = accelerationZ
    self.interbeatIntervals = interbeatIntervals
    self.tags = tags
  }

  /// Reads the export files found in `directory`; at least one must be there.
  public init(directory: String) throws(E4ConnectExportError) {
    var files: [String: String] = [:]
    var paths: [String: String] = [:]
    for name in Self.fileNames {
      let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
      guard FileManager.default.fileExists(atPath: path) else { continue }
      guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
      else {
        throw E4ConnectExportError(file: path, line: 0, column: 0, "cannot be read as UTF-8 text")
      }
      files[name] = text
      paths[name] = path
    }
    guard !files.isEmpty else {
      throw E4ConnectExportError(
        file: directory, line: 0, column: 0,
        "no E4 Connect export files here; expected one or more of " + Self.fileNames.joined(separator: ", "))
    }
    try self.init(files: files, paths: paths)
  }

  /// Reads an export from file contents by file name (`BVP.csv`, …); names
  /// other than the export's are refused. `paths` gives the names errors use.
  public init(files: [String: String], paths: [String: String] = [:]) throws(E4ConnectExportError) {
    for name in files.keys.sorted() where !Self.fileNames.contains(name) {
      throw E4ConnectExportError(
        file: paths[name] ?? name, line: 0, column: 0,
        "not an E4 Connect export file; expected one of " + Self.fileNames.joined(separator: ", "))
    }
    func rows(_ name: String) -> (file: String, rows: [Row])? {
      guard let text = files[name] else { return nil }
      let rows = CSVTable(text).rows
      return rows.isEmpty ? nil : (paths[name] ?? name, rows)
    }
    if let (file, rows) = rows("BVP.csv") { bvp = try Self.series(rows, columns: 1, file: file)[0] }
    if let (file, rows) = rows("EDA.csv") { eda = try Self.series(rows, columns: 1, file: file)[0] }
    if let (file, rows) = rows("TEMP.csv") { temperature = try Self.series(rows, columns: 1, file: file)[0] }
    if let (file, rows) = rows("HR.csv") { heartRate = try Self.series(rows, columns: 1, file: file)[0] }
    if let (file, rows) = rows("ACC.csv") {
      let axes = try Self.series(rows, columns: 3, file: file).map { axis in
        Series(startTime: axis.startTime, sampleRate: axis.sampleRate, values: axis.values.map { $0 / 64 })
      }
      (accelerationX, accelerationY, accelerationZ) = (axes[0], axes[1], axes[2])
    }
    if let (file, rows) = rows("IBI.csv") { interbeatIntervals = try Self.intervals(rows, file: file) }
    if let (file, rows) = rows("tags.csv") {
      tags = try rows.map { row throws(E4ConnectExportError) in
        try row.numbers(count: 1, file: file, what: "a tag's Unix time")[0]
      }
    }
  }

  /// The earliest start time of the export's series and beats.
  public var startTime: Double? {
    let starts = [bvp, eda, temperature, heartRate, accelerationX, accelerationY, accelerationZ].compactMap {
      $0?.startTime
    }
    return (starts + [interbeatIntervals?.startTime].compactMap { $0 }).min()
  }

  /// The signals a wristband streams, by stream name (`bvp`, `eda`,
  /// `temperature`, `acc.x`, `acc.y`, `acc.z`), all with time zero at the
  /// export's `startTime`.
  public func signals(loops: Bool = false) -> [String: RecordedSignal] {
    let origin = startTime
    let named: [(String, Series?)] = [
      ("bvp", bvp), ("eda", eda), ("temperature", temperature),
      ("acc.x", accelerationX), ("acc.y", accelerationY), ("acc.z", accelerationZ),
    ]
    var result: [String: RecordedSignal] = [:]
    for case (let name, let series?) in named {
      result[name] = series.recordedSignal(from: origin, loops: loops)
    }
    return result
  }

  /// Tags as seconds from `startTime`.
  public var tagOffsets: [Double] {
    guard let origin = startTime else { return [] }
    return tags.map { $0 - origin }
  }

  private static func series(_ rows: [Row], columns: Int, file: String) throws(E4ConnectExportError) -> [Series] {
    let starts = try rows[0].numbers(count: columns, file: file, what: "the start time (Unix seconds)")
    guard rows.count > 1 else {
      throw E4ConnectExportError(
        file: file, line: rows[0].line + 1, column: 1, "missing the sample rate row (Hz) after the start time")
    }
    let rates = try rows[1].numbers(count: columns, file: file, what: "the sample rate (Hz)")
    if let bad = rates.firstIndex(where: { $0 <= 0 }) {
      throw E4ConnectExportError(
        file: file, line: rows[1].line, column: rows[1].fields[bad].column,
        "the sample rate must be positive, found \(rates[bad])")
    }
    var values = Array(repeating: [Double](), count: columns)
    for row in rows.dropFirst(2) {
      let numbers = try row.numbers(count: columns, file: file, what: "a sample")
      for column in 0..<columns { values[column].append(numbers[column]) }
    }
    return (0..<columns).map { Series(startTime: starts[$0], sampleRate: rates[$0], values: values[$0]) }
  }

  private static func intervals(_ rows: [Row], file: String) throws(E4ConnectExportError) -> InterbeatIntervals {
    let header = rows[0]
    guard header.fields.count == 2 else {
      throw E4ConnectExportError(
        file: file, line: header.line, column: 1,
        "the first row must be the start time and IBI, found \(header.fields.count) field(s)")
    }
    let start = try header.number(0, file: file, what: "the start time (Unix seconds)")
    guard header.fields[1].text.uppercased() == "IBI" else {
      throw E4ConnectExportError(
        file: file, line: header.line, column: header.fields[1].column,
        "expected IBI after the start time, found '\(header.fields[1].text)'")
    }
    var beats: [InterbeatIntervals.Beat] = []
    for row in rows.dropFirst() {
      let numbers = try row.numbers(count: 2, file: file, what: "a beat (offset seconds, interval seconds)")
      if let previous = beats.last, numbers[0] < previous.offset {
        throw E4ConnectExportError(
          file: file, line: row.line, column: row.fields[0].column,
          "offsets must not decrease: \(numbers[0]) after \(previous.offset)")
      }
      guard numbers[1] > 0 else {
        throw E4ConnectExportError(
          file: file, line: row.line, column: row.fields[1].column,
          "an interbeat interval must be positive, found \(numbers[1])")
      }
      beats.append(InterbeatIntervals.Beat(offset: numbers[0], interval: numbers[1]))
    }
    return InterbeatIntervals(startTime: start, beats: beats)
  }

  private typealias Row = CSVTable.Row
}

extension CSVTable.Row {
  func number(_ index: Int, file: String, what: String) throws(E4ConnectExportError) -> Double {
    let field = fields[index]
    guard let value = Double(field.text), value.isFinite else {
      let found = field.text.isEmpty ? "an empty field" : "'\(field.text)'"
      throw E4ConnectExportError(
        file: file, line: line, column: field.column, "expected a number (\(what)), found \(found)")
    }
    return value
  }

  func numbers(count: Int, file: String, what: String) throws(E4ConnectExportError) -> [Double] {
    guard fields.count == count else {
      let column = fields.count > count ? fields[count].column : end
      throw E4ConnectExportError(
        file: file, line: line, column: column,
        "expected \(count) field\(count == 1 ? "" : "s") (\(what)), found \(fields.count)")
    }
    var result: [Double] = []
    for index in 0..<count { result.append(try number(index, file: file, what: what)) }
    return result
  }
}
