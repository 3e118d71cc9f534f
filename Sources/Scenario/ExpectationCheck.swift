import Foundation

/// Judges an expectation against what a client observed, or what the device
/// saw its central do.
enum ExpectationCheck {
  /// Judges an expectation against a run that a window cut short (`window`
  /// set) or that ran whole (`nil`). A window keeps every check of rates,
  /// values, gaps, metrics and errors, and leaves out what only a whole run
  /// can meet: how many samples, events, writes or firmware events there were.
  static func evaluate(
    _ expectation: Expectation, _ observed: DeviceObservations?, _ activity: CentralActivity?, window: Duration?
  ) -> ScenarioReport.Result {
    guard let window else { return evaluate(expectation, observed, activity) }
    let why =
      "the run was cut at \(ScenarioDuration.format(window)) (--window): only the whole run has to meet this count"
    switch expectation.check {
    case .samples(let stream, let count?, let rate, let minimum, let maximum, let mean, let maxGap):
      var result = evaluate(expectation, observed, activity)
      if rate == nil, minimum == nil, maximum == nil, mean == nil, maxGap == nil {
        result.passed = false
        result.notChecked = why
        result.countNotChecked = true
        return result
      }
      var rest = expectation
      rest.check = .samples(
        stream: stream, count: nil, rate: rate, minimum: minimum, maximum: maximum, mean: mean, maxGap: maxGap)
      result = evaluate(rest, observed, activity)
      result.expectation = expectation
      let counted =
        count.upperBound == Int.max ? "at least \(count.lowerBound)" : "\(count.lowerBound)…\(count.upperBound)"
      result.expected += " (\(counted) samples: not checked in the window)"
      result.countNotChecked = true
      return result
    case .event, .firmwareEvent, .centralWrote:
      var result = evaluate(expectation, observed, activity)
      result.passed = false
      result.notChecked = why
      result.countNotChecked = true
      return result
    default:
      return evaluate(expectation, observed, activity)
    }
  }

  static func evaluate(_ expectation: Expectation, _ observed: DeviceObservations?, _ activity: CentralActivity?)
    -> ScenarioReport.Result
  {
    if expectation.check.isDeviceSide {
      return CentralActivityCheck.evaluate(expectation, activity ?? CentralActivity())
    }
    let observed = observed ?? DeviceObservations()
    func result(_ passed: Bool, _ saw: String, _ wanted: String) -> ScenarioReport.Result {
      ScenarioReport.Result(expectation: expectation, passed: passed, observed: saw, expected: wanted)
    }
    switch expectation.check {
    case .connected(let within):
      guard let at = observed.connectedAt else {
        return result(false, "never connected", "connected within \(ScenarioDuration.format(within))")
      }
      return result(
        at <= within.seconds, String(format: "connected after %.3f s", at),
        "connected within \(ScenarioDuration.format(within))")
    case .samples(let stream, let count, let rate, let minimum, let maximum, let mean, let maxGap):
      let stats = observed.streams[stream] ?? StreamStatistics()
      var failures: [String] = []
      var wanted: [String] = []
      if let count {
        wanted.append(
          count.upperBound == Int.max
            ? "at least \(count.lowerBound) samples" : "\(count.lowerBound)…\(count.upperBound) samples")
        if !count.contains(stats.count) { failures.append("count") }
      }
      if let rate {
        wanted.append("rate \(rate)/s")
        if !(stats.rate.map(rate.accepts) ?? false) { failures.append("rate") }
      }
      if let minimum {
        wanted.append("values ≥ \(minimum)")
        if stats.count == 0 || stats.minimum < minimum { failures.append("minimum") }
      }
      if let maximum {
        wanted.append("values ≤ \(maximum)")
        if stats.count == 0 || stats.maximum > maximum { failures.append("maximum") }
      }
      if let mean {
        wanted.append("mean \(mean)")
        if !(stats.mean.map(mean.accepts) ?? false) { failures.append("mean") }
      }
      if let maxGap {
        wanted.append("no gap over \(ScenarioDuration.format(maxGap))")
        if stats.count < 2 || (stats.largestInterval ?? .infinity) > maxGap.seconds + 1e-9 { failures.append("gap") }
      }
      var saw = "\(stats.count) '\(stream)' samples"
      if let r = stats.rate { saw += String(format: " at %.2f/s", r) }
      if stats.count > 0, let m = stats.mean {
        saw += String(format: ", %.4g…%.4g, mean %.4g", stats.minimum, stats.maximum, m)
      }
      if maxGap != nil, let gap = stats.largestInterval { saw += String(format: ", longest gap %.1f ms", gap * 1000) }
      return result(failures.isEmpty, saw, wanted.joined(separator: ", "))
    case .metric(let name, let tolerance):
      guard let value = observed.metrics[name] else {
        return result(false, "no \(name) reported", "\(name) \(tolerance)")
      }
      return result(tolerance.accepts(value), String(format: "%@ %.4g", name, value), "\(name) \(tolerance)")
    case .event(let name, let count):
      let seen = observed.events[name] ?? 0
      let wanted =
        count.upperBound == Int.max
        ? "'\(name)' at least \(count.lowerBound)×"
        : count.lowerBound == count.upperBound
          ? "'\(name)' \(count.lowerBound)×" : "'\(name)' \(count.lowerBound)…\(count.upperBound)×"
      return result(count.contains(seen), "'\(name)' \(seen)×", wanted)
    case .error(let text):
      let match = observed.errors.first { $0.contains(text) }
      return result(
        match != nil, match.map { "error: \($0)" } ?? "\(observed.errors.count) errors, none containing it",
        "an error containing '\(text)'")
    case .noErrors:
      let count = observed.errors.count + observed.moreErrors
      return result(count == 0, count == 0 ? "no errors" : "\(count) errors, first: \(observed.errors[0])", "no errors")
    case .centralConnected, .centralSubscribed, .centralWrote, .centralReconnected, .centralStayedSubscribed,
      .noATTErrors, .firmwareEvent:
      return CentralActivityCheck.evaluate(expectation, activity ?? CentralActivity())
    }
  }
}
