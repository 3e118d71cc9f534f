import Foundation
import GATT

/// Judges a device-side expectation against what the device saw its central
/// do. Each failure says what was missing, in words a user can act on.
enum CentralActivityCheck {
  static func evaluate(_ expectation: Expectation, _ activity: CentralActivity) -> ScenarioReport.Result {
    func result(_ passed: Bool, _ saw: String, _ wanted: String) -> ScenarioReport.Result {
      ScenarioReport.Result(expectation: expectation, passed: passed, observed: saw, expected: wanted)
    }
    func seconds(_ time: Double) -> String { String(format: "%.3f s", time) }
    switch expectation.check {
    case .centralConnected(let within):
      let wanted = "a central connected within \(ScenarioDuration.format(within))"
      guard let first = activity.connections.first else { return result(false, "no central ever connected", wanted) }
      return result(
        first.connectedAt <= within.seconds + 1e-9, "\(first.central) connected after \(seconds(first.connectedAt))",
        wanted)
    case .centralSubscribed(let characteristic, let within):
      let wanted =
        "subscribed to '\(characteristic)'" + (within.map { " within \(ScenarioDuration.format($0))" } ?? "")
      guard let first = activity.subscriptions.first(where: { $0.characteristic == characteristic && $0.subscribed })
      else {
        let others = Set(activity.subscriptions.filter(\.subscribed).map(\.characteristic)).sorted()
        return result(
          false,
          "never subscribed to '\(characteristic)'"
            + (others.isEmpty ? "" : " (subscribed to \(others.joined(separator: ", ")))"), wanted)
      }
      return result(
        within.map { first.at <= $0.seconds + 1e-9 } ?? true,
        "subscribed to '\(characteristic)' after \(seconds(first.at))", wanted)
    case .centralWrote(let characteristic, let pattern, let count):
      let writes = activity.accesses.filter { $0.kind != .read && $0.characteristic == characteristic }
      let matching = writes.filter { pattern?.matches($0.bytes) ?? true }
      let what = "'\(characteristic)'" + (pattern.map { " matching \($0)" } ?? "")
      let wanted =
        count.upperBound == Int.max
        ? "wrote \(what) at least \(count.lowerBound)×"
        : count.lowerBound == count.upperBound
          ? "wrote \(what) \(count.lowerBound)×" : "wrote \(what) \(count.lowerBound)…\(count.upperBound)×"
      var saw = "\(matching.count) matching of \(writes.count) writes to '\(characteristic)'"
      if matching.isEmpty, let last = writes.last { saw += "; the last: \(Self.show(last.bytes))" }
      return result(count.contains(matching.count), saw, wanted)
    case .centralReconnected(let within, let again):
      let wanted =
        "after each dropped link, connected again within \(ScenarioDuration.format(within))"
        + (again.isEmpty ? "" : " and subscribed again to \(again.joined(separator: ", "))")
      // Timed from when the central lost the link: it cannot connect again
      // before. A device's own disconnect lets go at once, but bluetoothd
      // takes the link down only after its disconnect timer.
      let dropped = activity.connections.filter { $0.disconnectedAt != nil }
      guard !dropped.isEmpty else { return result(false, "the link never dropped, so nothing to reconnect", wanted) }
      let end = activity.connections.map { $0.droppedAt ?? $0.connectedAt }.max() ?? 0
      var problems: [String] = []
      var reconnections = 0
      for connection in dropped {
        guard let asked = connection.disconnectedAt, let drop = connection.droppedAt else { continue }
        let when =
          "dropped at \(seconds(asked))" + (drop > asked ? " (the link down at \(seconds(drop)))" : "")
        guard let next = activity.connections.first(where: { $0.connectedAt >= drop }) else {
          // A drop at the very end of the run (the run stopping) needs no reconnection.
          if drop < end || activity.faultDisconnects.contains(where: { abs($0 - asked) < 1 }) {
            problems.append("\(when), never connected again")
          }
          continue
        }
        reconnections += 1
        if next.connectedAt - drop > within.seconds + 1e-9 {
          problems.append("\(when), connected again only after \(seconds(next.connectedAt - drop))")
          continue
        }
        for characteristic in again {
          let resubscribed = activity.subscriptions.first {
            $0.characteristic == characteristic && $0.subscribed && $0.at >= next.connectedAt
          }
          if resubscribed == nil || resubscribed!.at - drop > within.seconds + 1e-9 {
            problems.append(
              "\(when), connected again after \(seconds(next.connectedAt - drop)) but "
                + (resubscribed.map { "subscribed to '\(characteristic)' only after \(seconds($0.at - drop))" }
                  ?? "never subscribed to '\(characteristic)' again"))
          }
        }
      }
      let saw =
        problems.isEmpty
        ? "\(dropped.count) dropped, \(reconnections) reconnected in time" : problems.joined(separator: "; ")
      return result(problems.isEmpty, saw, wanted)
    case .centralStayedSubscribed(let characteristic):
      let subscribed = activity.isSubscribed(characteristic)
      let last = activity.subscriptions.last { $0.characteristic == characteristic }
      return result(
        subscribed,
        subscribed
          ? "subscribed to '\(characteristic)' at the end"
          : last.map { "unsubscribed from '\(characteristic)' at \(seconds($0.at))" }
            ?? "never subscribed to '\(characteristic)'",
        "subscribed to '\(characteristic)' until the end")
    case .noATTErrors:
      let errors = activity.attErrors
      return result(
        errors.isEmpty,
        errors.first.map {
          "\(errors.count) ATT errors; the first: \($0.kind.rawValue) '\($0.characteristic)' at \(seconds($0.at)) → "
            + ($0.error.map(ATTErrorName.describe) ?? "")
        } ?? "no ATT errors", "no read or write answered with an ATT error")
    case .firmwareEvent(let name, let count):
      let seen = activity.firmwareEvents.filter { $0.name == name }
      let wanted =
        count.upperBound == Int.max
        ? "firmware event '\(name)' at least \(count.lowerBound)×"
        : count.lowerBound == count.upperBound
          ? "firmware event '\(name)' \(count.lowerBound)×"
          : "firmware event '\(name)' \(count.lowerBound)…\(count.upperBound)×"
      return result(
        count.contains(seen.count),
        "'\(name)' \(seen.count)×" + (seen.last.map { " (last: \($0.detail))" } ?? ""), wanted)
    case .connected, .samples, .metric, .event, .error, .noErrors:
      return result(false, "not a device-side check", "")
    }
  }

  /// Bytes as a user reads them: text when printable, hex otherwise.
  static func show(_ bytes: [UInt8]) -> String {
    if !bytes.isEmpty, bytes.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x0A || $0 == 0x0D }) {
      return "\"" + String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
    return bytes.prefix(24).map { String(format: "%02x", $0) }.joined(separator: " ")
      + (bytes.count > 24 ? " … (\(bytes.count) bytes)" : "")
  }
}
